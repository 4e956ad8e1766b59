"""Codes and array layouts shared by the reference model, the kernel and the result readers.

Both engines read their settings from one int64 array and write their results into
caller-allocated arrays whose columns are named here, so that a kernel signature stays short
and the two engines cannot disagree about where a number lives.
"""

from __future__ import annotations

# Scheduling policies.
POLICY_VLLM = 0
POLICY_TRTLLM_NO_EVICT = 1
POLICY_TRTLLM_MAX_UTIL = 2
POLICY_STATIC = 3
POLICY_NAMES = {
    "vllm": POLICY_VLLM,
    "trtllm-no-evict": POLICY_TRTLLM_NO_EVICT,
    "trtllm-max-util": POLICY_TRTLLM_MAX_UTIL,
    "static": POLICY_STATIC,
}

# Routers in front of the replicas.
ROUTER_ROUND_ROBIN = 0
ROUTER_LEAST_OUTSTANDING = 1
ROUTER_NAMES = {"round-robin": ROUTER_ROUND_ROBIN, "least-outstanding": ROUTER_LEAST_OUTSTANDING}

# Request status codes.
STATUS_UNFINISHED = 0  # not finished when the run stopped at a cap (or never issued)
STATUS_FINISHED = 1
STATUS_REJECTED = 2  # can never run: longer than max_model_len or more KV blocks than the pool

# Settings: int64[SETTINGS_SIZE].
SET_POLICY = 0
SET_ROUTER = 1
SET_REPLICAS = 2
SET_USERS = 3  # 0 = open loop (arrivals as given)
SET_MAX_NUM_SEQS = 4
SET_MAX_BATCHED_TOKENS = 5
SET_BLOCK_SIZE = 6
SET_KV_BLOCKS_TOTAL = 7  # per replica
SET_LONG_PREFILL_THRESHOLD = 8  # 0 = off
SET_MAX_MODEL_LEN = 9
SET_PREFIX_TOKENS = 10  # shared system prompt, 0 = none
SET_STATIC_BATCH = 11
SET_FAST_FORWARD = 12  # 1: steady decode iterations are costed without revisiting every request
SET_MAX_ITERATIONS = 13  # reaching it stops the run (capped)
SETTINGS_SIZE = 14

# Per-request outputs, float64[n, REQUEST_FLOAT_SIZE] (NaN where it did not happen).
REQ_ISSUE_S = 0  # when it arrived (open loop) or was issued by its user (closed loop)
REQ_FIRST_TOKEN_S = 1
REQ_END_S = 2
REQUEST_FLOAT_SIZE = 3

# Per-request outputs, int64[n, REQUEST_INT_SIZE].
REQ_REPLICA = 0  # -1 when never routed
REQ_STATUS = 1
REQ_PREEMPTIONS = 2
REQ_TOKENS_EMITTED = 3
REQUEST_INT_SIZE = 4

# Per-iteration outputs, float64[rows, ITERATION_FLOAT_SIZE]. Iteration i's record goes to row
# i % rows: with rows = SET_MAX_ITERATIONS every record is kept; a run that needs only the
# per-request outputs passes one row, which each iteration overwrites.
IT_START_S = 0
IT_DURATION_S = 1
IT_ENERGY_J = 2
ITERATION_FLOAT_SIZE = 3

# Per-iteration outputs, int64[rows, ITERATION_INT_SIZE], rows as above.
IT_REPLICA = 0
IT_SEQUENCES = 1  # scheduled requests (static batches include finished members)
IT_TOKENS = 2  # new tokens computed
IT_PREFILL_TOKENS = 3  # tokens of prefill (chunk) steps
IT_DECODE_TOKENS = 4  # tokens emitted by decode steps
IT_ITL_TOKENS = 5  # tokens whose gap to the request's previous token is this iteration's duration
IT_WAITING = 6  # waiting queue length after this iteration's scheduling decision
IT_RUNNING = 7  # running requests after this iteration's scheduling decision
IT_KV_BLOCKS = 8  # KV blocks in use after scheduling (shared prefix blocks included)
IT_PREEMPTIONS = 9
ITERATION_INT_SIZE = 10

# Run counters, int64[COUNTERS_SIZE].
CNT_ITERATIONS = 0
CNT_CAPPED = 1  # 1 when max_iterations or max_time_s stopped the run
CNT_REJECTED = 2
CNT_PREEMPTIONS = 3
CNT_GAPS = 4  # irregular inter-token gaps written to gap_s
CNT_GAPS_DROPPED = 5  # irregular gaps that did not fit in gap_s
COUNTERS_SIZE = 6

# Step kinds of a scheduled request.
STEP_PREFILL = 0
STEP_DECODE = 1
STEP_PADDING = 2  # a finished member of a static batch keeps its slot and emits nothing
