"""Request traces are untrusted input: good files load sorted; every bad one is refused in one
line naming the file, the line and the field."""

from __future__ import annotations

import os

import numpy as np
import pytest

from accelscope.engine.catalog import traces
from accelscope.engine.catalog.traces import load_trace
from accelscope.engine.core.errors import CatalogError


def write(tmp_path, name, text, mode="w"):
    path = tmp_path / name
    if mode == "wb":
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def test_csv_trace_loads_sorted_by_arrival(tmp_path):
    path = write(tmp_path, "t.csv", "arrival_s,input_tokens,output_tokens\n0.5,100,10\n0.0,200,20\n\n1.25,300,30\n")
    trace = load_trace(path)
    assert trace.requests == 3
    assert trace.arrival_s.tolist() == [0.0, 0.5, 1.25]
    assert trace.input_tokens.tolist() == [200, 100, 300] and trace.output_tokens.tolist() == [20, 10, 30]
    assert trace.input_tokens.dtype == np.int64


def test_jsonl_trace_with_common_column_names(tmp_path):
    lines = ['{"timestamp": 2, "prompt_tokens": 7, "completion_tokens": 3}',
             '{"arrival_s": 1.5, "input_tokens": 9.0, "output_tokens": "4"}']
    trace = load_trace(write(tmp_path, "t.jsonl", "\n".join(lines) + "\n"))
    assert trace.arrival_s.tolist() == [1.5, 2.0] and trace.input_tokens.tolist() == [9, 7]
    assert trace.output_tokens.tolist() == [4, 3]


@pytest.mark.parametrize(
    ("name", "text", "expected"),
    [
        ("t.csv", "when,input_tokens,output_tokens\n0,1,1\n", "t.csv: line 1: missing column 'arrival_s'"),
        ("t.csv", "arrival_s,input_tokens,output_tokens\n0,1\n", "t.csv: line 2: 2 fields, the header has 3"),
        ("t.csv", "arrival_s,input_tokens,output_tokens\n0,1,1\n-1,2,2\n", "t.csv: line 3: arrival_s: must be between 0"),
        ("t.csv", "arrival_s,input_tokens,output_tokens\n0,1.5,1\n", "t.csv: line 2: input_tokens: must be a whole number"),
        ("t.csv", "arrival_s,input_tokens,output_tokens\n0,0,1\n", "t.csv: line 2: input_tokens: must be a whole number"),
        ("t.csv", "arrival_s,input_tokens,output_tokens\nnan,1,1\n", "t.csv: line 2: arrival_s: must be finite"),
        ("t.csv", "arrival_s,input_tokens,output_tokens\n0,1,ten\n", "t.csv: line 2: output_tokens: must be a number"),
        ("t.csv", "arrival_s,input_tokens,output_tokens\n", "t.csv: no requests in the trace"),
        ("t.csv", "", "t.csv: line 1: no header"),
        ("t.jsonl", '{"arrival_s": 0, "input_tokens": 1}\n', "t.jsonl: line 1: missing key 'output_tokens'"),
        ("t.jsonl", "[1, 2, 3]\n", "t.jsonl: line 1: each line must be a JSON object"),
        ("t.jsonl", '{"arrival_s": 0, "input_tokens": 1, "output_tokens": 1}\n{oops\n', "t.jsonl: line 2: not a JSON object"),
        ("t.jsonl", '{"arrival_s": true, "input_tokens": 1, "output_tokens": 1}\n', "arrival_s: must be a number, got True"),
        ("t.jsonl", '{"arrival_s": 0, "input_tokens": 1e400, "output_tokens": 1}\n', "input_tokens: must be finite"),
        ("t.txt", "whatever", "unknown trace format '.txt'; use .csv or .jsonl"),
    ],
)
def test_bad_traces_are_refused_in_one_line(tmp_path, name, text, expected):
    with pytest.raises(CatalogError) as raised:
        load_trace(write(tmp_path, name, text))
    message = str(raised.value)
    assert expected in message and "\n" not in message


def test_undecodable_and_oversized_files_are_refused(tmp_path, monkeypatch):
    with pytest.raises(CatalogError, match="not UTF-8 text"):
        load_trace(write(tmp_path, "t.csv", b"arrival_s,input_tokens,output_tokens\n\xff,1,1\n", "wb"))
    monkeypatch.setattr(traces, "MAX_TRACE_BYTES", 64)
    with pytest.raises(CatalogError, match="larger than"):
        load_trace(write(tmp_path, "big.csv", "arrival_s,input_tokens,output_tokens\n" + "0,1,1\n" * 20))


def test_too_many_requests_are_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(traces, "MAX_TRACE_REQUESTS", 3)
    with pytest.raises(CatalogError, match="more than 3 requests"):
        load_trace(write(tmp_path, "t.csv", "arrival_s,input_tokens,output_tokens\n" + "0,1,1\n" * 4))


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
def test_a_named_pipe_is_refused_without_waiting(tmp_path):
    fifo = tmp_path / "t.csv"
    os.mkfifo(fifo)
    with pytest.raises(CatalogError, match="named pipe"):
        load_trace(fifo)
