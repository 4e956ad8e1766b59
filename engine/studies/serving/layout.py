"""Codes and array layouts shared by the reference model, the kernel and the result readers.

Both engines read their settings from one int64 and one float64 array and write their results
into caller-allocated arrays whose columns are named here, so that a kernel signature stays
short and the two engines cannot disagree about where a number lives.
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
ROUTER_ASSIGNED = 2  # each request names its replica (a sample of round-robin replicas, see run.py)
ROUTER_NAMES = {"round-robin": ROUTER_ROUND_ROBIN, "least-outstanding": ROUTER_LEAST_OUTSTANDING,
                "assigned": ROUTER_ASSIGNED}

# Request status codes.
STATUS_UNFINISHED = 0  # not finished when the run stopped (or never issued)
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
SET_STRETCHES = 12  # 1: runs of pure decode iterations advance as one event (stretches)
SET_MAX_RECORDS = 13  # iteration records (an iteration or a stretch each); reaching it stops the run (capped)
SET_MEASURED_REQUESTS = 14  # > 0: stop once the first this many requests have all left (open loop)
SETTINGS_SIZE = 15

# Time settings: float64[TIME_SETTINGS_SIZE].
TS_MAX_TIME_S = 0  # the run stops (capped) at the first event after this time
TS_BIN_WIDTH_S = 1  # the time bins' first width (doubled as the run outgrows them)
TIME_SETTINGS_SIZE = 2

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

# Iteration records, float64[rows, ITERATION_FLOAT_SIZE]. A record is one iteration, or a
# stretch of IT_ITERATIONS decode iterations of the same requests (their durations rise
# linearly from IT_FIRST_DURATION_S to IT_LAST_DURATION_S within each linear piece of the
# physics; see physics/kernels/iteration.py). Record i goes to row i % rows: with rows =
# SET_MAX_RECORDS every record is kept; a run that needs only the per-request outputs and the
# bins passes one row, which each record overwrites.
IT_START_S = 0
IT_DURATION_S = 1  # all its iterations
IT_ENERGY_J = 2  # all its iterations
IT_FIRST_DURATION_S = 3
IT_LAST_DURATION_S = 4
ITERATION_FLOAT_SIZE = 5

# Iteration records, int64[rows, ITERATION_INT_SIZE], rows as above; counts are each iteration's.
IT_REPLICA = 0
IT_ITERATIONS = 1  # iterations the record stands for (1, or a stretch's)
IT_SEQUENCES = 2  # scheduled requests (static batches include finished members)
IT_TOKENS = 3  # new tokens computed
IT_PREFILL_TOKENS = 4  # tokens of prefill (chunk) steps
IT_DECODE_TOKENS = 5  # tokens emitted by decode steps
IT_ITL_TOKENS = 6  # tokens whose gap to the request's previous token is the iteration's duration
IT_WAITING = 7  # waiting queue length after the scheduling decision
IT_RUNNING = 8  # running requests after the scheduling decision
IT_KV_BLOCKS = 9  # KV blocks in use after scheduling (a stretch: at its last iteration)
IT_PREEMPTIONS = 10
ITERATION_INT_SIZE = 11

# Run counters, int64[COUNTERS_SIZE].
CNT_ITERATIONS = 0
CNT_RECORDS = 1
CNT_CAPPED = 2  # 1 when SET_MAX_RECORDS or TS_MAX_TIME_S stopped the run
CNT_REJECTED = 3
CNT_PREEMPTIONS = 4
CNT_GAPS = 5  # irregular inter-token gaps written to gap_s
CNT_GAPS_DROPPED = 6  # irregular gaps that did not fit in gap_s
CNT_STRETCHES = 7  # records that are stretches (a diagnostic of the work saved)
CNT_MEASURED_DONE = 8  # 1 when the run stopped because its measured requests had all left
COUNTERS_SIZE = 9

# Time bins, float64[bins, BIN_SIZE]: what happened in [i w, (i + 1) w), w = RUN_BIN_WIDTH_S,
# summed over replicas. Points (an arrival, a token) go to the bin of their time; spans (busy
# time, queue lengths) are split between the bins they cross; an iteration's energy is spread
# over its span (a stretch's at its mean power).
BIN_ARRIVALS = 0  # requests issued
BIN_OUTPUT_TOKENS = 1  # tokens emitted, first tokens included
BIN_FIRST_TOKENS = 2  # requests that emitted their first token
BIN_PROMPT_TOKENS = 3  # prompt tokens of the requests that emitted their first token
BIN_FINISHED = 4  # requests that emitted their last token
BIN_BUSY_S = 5  # replica-seconds spent in iterations
BIN_ENERGY_J = 6  # energy of the iterations (idle power is the reader's to add)
BIN_WAITING_S = 7  # integral of the waiting queue lengths over time (request-seconds)
BIN_RUNNING_S = 8  # integral of the running requests over time
BIN_SATURATED_S = 9  # replica-seconds during which requests waited (the batch at a limit)
BIN_SATURATED_TOKENS = 10  # tokens emitted by iterations scheduled while requests waited
BIN_PREEMPTIONS = 11
BIN_SIZE = 12
DEFAULT_BINS = 512

# Run outputs, float64[RUN_FLOAT_SIZE].
RUN_BIN_WIDTH_S = 0  # the bins' width at the end of the run
RUN_END_S = 1  # the last event's time, or the stop's when a bound stopped the run
RUN_FLOAT_SIZE = 2

# Step kinds of a scheduled request.
STEP_PREFILL = 0
STEP_DECODE = 1
STEP_PADDING = 2  # a finished member of a static batch keeps its slot and emits nothing
