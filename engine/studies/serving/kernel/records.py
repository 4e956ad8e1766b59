"""Iteration records (``..layout.IT_*``): twins of the reference's ``write_record``,
``set_record_cost`` and ``record_emissions``. Record i goes to row i % rows."""

from __future__ import annotations

from ....physics.jit import jit
from ..layout import (
    IT_DECODE_TOKENS,
    IT_DURATION_S,
    IT_ENERGY_J,
    IT_FIRST_DURATION_S,
    IT_ITERATIONS,
    IT_ITL_TOKENS,
    IT_KV_BLOCKS,
    IT_LAST_DURATION_S,
    IT_PREEMPTIONS,
    IT_PREFILL_TOKENS,
    IT_REPLICA,
    IT_RUNNING,
    IT_SEQUENCES,
    IT_START_S,
    IT_TOKENS,
    IT_WAITING,
)
from .state import (
    LOOP_RECORDS,
    RP_BLOCKS_USED,
    RP_BUSY,
    RP_ITERATION,
    RP_RUNNING_LENGTH,
    RP_WAITING_LENGTH,
    RP_WAITING_SCHEDULED,
    RT_END_S,
    RT_ENERGY_J,
    RT_START_S,
)


@jit(internal=True)
def write_record(st, replica, time_s, sequences, tokens, prefill_tokens, preemptions):
    """Write the record of an iteration starting now; the replica is busy until it ends."""
    iteration = st.loop[LOOP_RECORDS]
    st.loop[LOOP_RECORDS] = iteration + 1
    row = iteration % st.iteration_float.shape[0]
    st.iteration_float[row, IT_START_S] = time_s
    record = st.iteration_int[row]
    record[IT_REPLICA] = replica
    record[IT_ITERATIONS] = 1
    record[IT_SEQUENCES] = sequences
    record[IT_TOKENS] = tokens
    record[IT_PREFILL_TOKENS] = prefill_tokens
    record[IT_DECODE_TOKENS] = 0
    record[IT_ITL_TOKENS] = 0
    record[IT_WAITING] = st.replica_state[replica, RP_WAITING_LENGTH]
    record[IT_RUNNING] = st.replica_state[replica, RP_RUNNING_LENGTH]
    record[IT_KV_BLOCKS] = st.replica_state[replica, RP_BLOCKS_USED]
    record[IT_PREEMPTIONS] = preemptions
    st.replica_state[replica, RP_ITERATION] = iteration
    st.replica_state[replica, RP_WAITING_SCHEDULED] = st.replica_state[replica, RP_WAITING_LENGTH]
    st.replica_state[replica, RP_BUSY] = 1
    st.replica_times[replica, RT_START_S] = time_s


@jit(internal=True)
def set_record_cost(st, replica, duration_s, energy_j):
    row = st.replica_state[replica, RP_ITERATION] % st.iteration_float.shape[0]
    record = st.iteration_float[row]
    record[IT_DURATION_S] = duration_s
    record[IT_ENERGY_J] = energy_j
    record[IT_FIRST_DURATION_S] = duration_s
    record[IT_LAST_DURATION_S] = duration_s
    st.replica_times[replica, RT_ENERGY_J] = energy_j
    st.replica_times[replica, RT_END_S] = st.replica_times[replica, RT_START_S] + duration_s


@jit(internal=True)
def record_emissions(st, iteration, decode_tokens, regular_gaps):
    """Complete a record with the tokens each of its iterations emitted."""
    row = iteration % st.iteration_int.shape[0]
    st.iteration_int[row, IT_DECODE_TOKENS] = decode_tokens
    st.iteration_int[row, IT_ITL_TOKENS] = regular_gaps
