"""The closed-loop issue heap and the replicas' waiting queues (singly linked FIFOs through
``RS_NEXT_WAITING``): the reference's ``heapq`` and ``deque``."""

from __future__ import annotations

from ....physics.jit import jit
from .state import LOOP_PENDING, RP_WAITING_HEAD, RP_WAITING_LENGTH, RP_WAITING_TAIL, RS_NEXT_WAITING


@jit(inline=True)
def heap_before(time_a, request_a, time_b, request_b):
    """Order of the closed-loop issue heap: by time, then request index."""
    return time_a < time_b or (time_a == time_b and request_a < request_b)


@jit(internal=True)
def heap_push(st, time_s, request):
    position = st.loop[LOOP_PENDING]
    st.loop[LOOP_PENDING] = position + 1
    while position > 0:
        parent = (position - 1) // 2
        if not heap_before(time_s, request, st.heap_s[parent], st.heap_request[parent]):
            break
        st.heap_s[position] = st.heap_s[parent]
        st.heap_request[position] = st.heap_request[parent]
        position = parent
    st.heap_s[position] = time_s
    st.heap_request[position] = request


@jit(internal=True)
def heap_pop(st):
    """Remove the root; the caller has read it."""
    heap_s = st.heap_s
    heap_request = st.heap_request
    last = st.loop[LOOP_PENDING] - 1
    st.loop[LOOP_PENDING] = last
    time_s = heap_s[last]
    request = heap_request[last]
    position = 0
    while True:
        child = 2 * position + 1
        if child >= last:
            break
        if child + 1 < last and heap_before(heap_s[child + 1], heap_request[child + 1], heap_s[child],
                                            heap_request[child]):
            child += 1
        if not heap_before(heap_s[child], heap_request[child], time_s, request):
            break
        heap_s[position] = heap_s[child]
        heap_request[position] = heap_request[child]
        position = child
    if last > 0:
        heap_s[position] = time_s
        heap_request[position] = request


@jit(internal=True)
def waiting_push_back(st, replica, request):
    st.request_state[request, RS_NEXT_WAITING] = -1
    tail = st.replica_state[replica, RP_WAITING_TAIL]
    if tail == -1:
        st.replica_state[replica, RP_WAITING_HEAD] = request
    else:
        st.request_state[tail, RS_NEXT_WAITING] = request
    st.replica_state[replica, RP_WAITING_TAIL] = request
    st.replica_state[replica, RP_WAITING_LENGTH] += 1


@jit(internal=True)
def waiting_push_front(st, replica, request):
    st.request_state[request, RS_NEXT_WAITING] = st.replica_state[replica, RP_WAITING_HEAD]
    st.replica_state[replica, RP_WAITING_HEAD] = request
    if st.replica_state[replica, RP_WAITING_TAIL] == -1:
        st.replica_state[replica, RP_WAITING_TAIL] = request
    st.replica_state[replica, RP_WAITING_LENGTH] += 1


@jit(internal=True)
def waiting_pop_front(st, replica):
    request = st.replica_state[replica, RP_WAITING_HEAD]
    following = st.request_state[request, RS_NEXT_WAITING]
    st.replica_state[replica, RP_WAITING_HEAD] = following
    if following == -1:
        st.replica_state[replica, RP_WAITING_TAIL] = -1
    st.replica_state[replica, RP_WAITING_LENGTH] -= 1
    return request
