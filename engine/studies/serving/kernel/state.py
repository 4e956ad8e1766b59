"""The kernel's state: one structure of flat arrays that every stage takes, and its columns.

The inputs and outputs are the caller's (layouts in ``..layout``); the rest is scratch made by
``loop.simulate_kernel``, whose contents need no initialisation (``loop.initialise`` sets what
it reads). Data structures are chosen so that an event costs O(scheduled requests): each
replica's waiting queue is a singly linked FIFO threaded through the request table (O(1) push
at either end and pop at the head, O(n) memory for all replicas together), its running list an
ordered array with O(1) pop from the tail, and closed-loop users waiting to issue sit in a
binary heap.
"""

from __future__ import annotations

from collections import namedtuple

import numba
from numba.core import types
from numba.experimental import structref

# Request table columns, int64[n, RS_SIZE]: the reference's ``Request`` fields.
RS_COMPUTED = 0
RS_NUM_TOKENS = 1  # prompt + generated tokens
RS_BLOCKS_HELD = 2  # logical blocks, shared prefix blocks included
RS_SHARED_BLOCKS = 3
RS_EMITTED = 4
RS_RECOMPUTING = 5
RS_KV_READY = 6  # prompt KV computed elsewhere; the first token is already emitted
RS_LAST_EMIT_ITERATION = 7
RS_NEXT_WAITING = 8  # next request in its replica's waiting queue, -1 at the tail
RS_OWN_BLOCKS_TO_COMPLETION = 9  # no-evict reservation while running
RS_SIZE = 10

# Replica table columns, int64[replicas, RP_SIZE]: the reference's ``Replica`` fields.
RP_WAITING_HEAD = 0
RP_WAITING_TAIL = 1
RP_WAITING_LENGTH = 2
RP_RUNNING_LENGTH = 3
RP_BUSY = 4
RP_ITERATION = 5  # record of the iteration (or stretch) in flight
RP_PREVIOUS_ITERATION = 6
RP_BLOCKS_USED = 7
RP_RESERVED_BLOCKS = 8
RP_PREFIX_CACHED = 9
RP_OUTSTANDING = 10
RP_SCHEDULED_LENGTH = 11
RP_WAITING_SCHEDULED = 12  # waiting requests after the in-flight iteration's scheduling
RP_IN_WINDOW = 13  # 1: in a steady window (its members' state lags, see windows.close_window)
RP_WINDOW_MEMBERS = 14  # the window's requests: the head of the running list
RP_WINDOW_STARTED = 15  # iterations started in the window
RP_WINDOW_COMPLETED = 16
RP_WINDOW_LIMIT = 17  # the window's next step at which a member emits its last token
RP_WINDOW_HOLD = 18  # last window step whose positions follow by increment from the last refresh
RP_WINDOW_LAST_ITERATION = 19  # record of the window's last completed step
RP_IN_STRETCH = 20  # 1: the window's step in flight is a stretch of several iterations
RP_STRETCH_ITERATIONS = 21  # planned, fewer once cut
RP_STRETCH_PIECES = 22  # linear pieces of its cost (physics.iteration.stretch_pieces)
RP_SIZE = 23

# Replica times, float64[replicas, RT_SIZE].
RT_END_S = 0  # end of the iteration or stretch in flight
RT_START_S = 1  # its start
RT_ENERGY_J = 2  # its energy (an iteration's)
RT_LEVELS_S = 3  # when the queue lengths were last integrated into the bins
RT_WINDOW_POSITIONS = 4  # the members' decode positions at the window's next step
RT_WINDOW_INCREMENT = 5  # and their change per step until RP_WINDOW_HOLD
RT_WINDOW_LAST_TOKEN_S = 6  # when the window's last completed step emitted
RT_STRETCH_FIRST_POSITIONS = 7  # the stretch's decode positions at its first iteration
RT_SIZE = 8

# Scheduled entries, int64[replicas, capacity, SCHED_SIZE].
SCHED_REQUEST = 0
SCHED_TOKENS = 1
SCHED_KIND = 2
SCHED_SIZE = 3

# Event-loop scalars, int64[LOOP_SIZE].
LOOP_NEXT_OPEN_ARRIVAL = 0
LOOP_NEXT_UNISSUED = 1
LOOP_PENDING = 2  # closed-loop issues in the heap
LOOP_ROUND_ROBIN = 3
LOOP_RECORDS = 4
LOOP_MEASURED_LEFT = 5  # of the first SET_MEASURED_REQUESTS requests, those that have left
LOOP_SIZE = 6

# Event-loop floats, float64[LOOP_FLOAT_SIZE].
LF_BIN_WIDTH_S = 0
LOOP_FLOAT_SIZE = 1

STATE_FIELDS = (
    # inputs
    "arrival_s", "prompt_tokens", "output_tokens", "think_s", "prior_token_s", "assigned_replica", "settings",
    "time_settings", "cost",
    # outputs
    "request_float", "request_int", "iteration_float", "iteration_int", "gap_s", "counters", "bins", "run_float",
    # scratch
    "request_state", "last_token_s", "replica_state", "replica_times", "running", "scheduled", "heap_s",
    "heap_request", "loop", "loop_float", "block_phases", "window_terms", "stretch_starts",
    "stretch_table",
)


if numba.config.DISABLE_JIT:
    # With the compiler off the stages run as Python over a plain record of the same fields.
    State = namedtuple("State", STATE_FIELDS)
else:
    @structref.register
    class StateType(types.StructRef):
        """The numba type of a ``State``: a reference to its arrays, so that a stage receives one
        pointer (a tuple of this many arrays made every stage's compile several times longer,
        and its calls slower)."""

        def preprocess_fields(self, fields):
            return tuple((name, types.unliteral(field)) for name, field in fields)

    class State(structref.StructRefProxy):
        """The arrays of one run (``STATE_FIELDS``), as the kernel's stages read them."""

    structref.define_proxy(State, StateType, list(STATE_FIELDS))
