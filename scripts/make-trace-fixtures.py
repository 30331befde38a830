#!/usr/bin/env python3
"""Writes the small trace fixtures of tests/fixtures/workloads/ (python3 stdlib only).

Each file follows its published layout exactly (docs/workloads.md says where the real traces are
published); the contents are synthetic and seeded, so running this again writes the same bytes:

  mooncake-200.jsonl  Mooncake (kvcache-ai/Mooncake FAST'25 traces): {"timestamp" (ms),
                      "input_length", "output_length", "hash_ids"}; 200 requests 40 ms apart whose
                      hash_ids share leading blocks (8 shared "system prompts" of 2-12 blocks of
                      16 tokens, then 1-6 blocks of their own); a shared block is always full
                      and never the last one (the last holds at least 2 tokens)
  burstgpt.csv        BurstGPT (HPMLL/BurstGPT): Timestamp,Model,Request tokens,Response tokens,
                      Total tokens,Log Type; failures have Response tokens 0
  azure-code.csv      Azure LLM inference trace 2023 (Azure/AzurePublicDataset):
                      TIMESTAMP,ContextTokens,GeneratedTokens
  plain.jsonl         servebench's plain JSONL: timestamp_ms, input_tokens, output_tokens, and
                      optional prompt or messages
  replay-1000.jsonl   1,000 requests (plain JSONL) at 200 req/s (Poisson), for the send-lag
                      measurement of docs/performance.md
  lengths.txt         one length per line (--input-tokens file:PATH)
  sharegpt.json       ShareGPT, as ShareGPT_V3_unfiltered_cleaned_split.json (the file vllm bench
                      serve reads): a JSON array (indent 2) of {"id", "conversations": [{"from":
                      "human"|"gpt", "value"}, ...]}; 12 conversations, one starting with a gpt
                      turn (the first human turn is the prompt) and one with no reply (skipped)
  dataset.jsonl       servebench's dataset JSONL: prompt or messages, optional output_tokens,
                      optional images (a file path and a data: URL)
  dataset-bad.jsonl   the same with a malformed line 3 (a file:line error, --skip-bad-lines)
  dataset-image.png   the 2x2 PNG dataset.jsonl names

Usage: scripts/make-trace-fixtures.py [OUT_DIR]   (default tests/fixtures/workloads)
"""
import base64
import json
import os
import random
import struct
import sys
import zlib

BLOCK = 16


def mooncake(rng):
    lines = []
    next_id = 0
    groups = []
    for _ in range(8):
        n = rng.randint(2, 12)
        groups.append(list(range(next_id, next_id + n)))
        next_id += n
    t = 0
    for _ in range(200):
        group = rng.choice(groups)
        shared = group[: rng.randint(1, len(group))]
        own = rng.randint(1, 6)
        ids = list(shared) + list(range(next_id, next_id + own))
        next_id += own
        # The last block is always the request's own and holds at least 2 tokens, so that the
        # chat template's closing tokens (2 on the simulator) never fall into a shared block.
        length = len(ids) * BLOCK - rng.randint(0, BLOCK - 2)
        lines.append(json.dumps({"timestamp": t, "input_length": length,
                                 "output_length": rng.randint(1, 8), "hash_ids": ids},
                                separators=(", ", ": ")))
        t += 40
    return lines


def burstgpt(rng):
    rows = ["Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type"]
    t = 5
    for i in range(20):
        req = rng.randint(20, 600)
        resp = 0 if i in (3, 11) else rng.randint(1, 300)  # two failures
        model = rng.choice(["ChatGPT", "GPT-4"])
        kind = rng.choice(["Conversation log", "API log"])
        rows.append(f"{t},{model},{req},{resp},{req + resp},{kind}")
        t += rng.randint(0, 3)
    return rows


def azure(rng):
    rows = ["TIMESTAMP,ContextTokens,GeneratedTokens"]
    us = 0
    for _ in range(20):
        sec = 46 + us // 1_000_000
        frac = (us % 1_000_000) * 10  # seven digits, as published
        rows.append(f"2023-11-16 18:15:{sec:02d}.{frac:07d},{rng.randint(30, 4000)},"
                    f"{rng.randint(1, 200)}")
        us += rng.randint(10_000, 400_000)
    return rows


def plain(rng):
    lines = [
        {"timestamp_ms": 0, "input_tokens": 120, "output_tokens": 16},
        {"timestamp_ms": 250.5, "input_tokens": 40, "output_tokens": 8,
         "prompt": "Summarise the plot of Hamlet in two sentences."},
        {"timestamp_ms": 400, "input_tokens": 30, "output_tokens": 4,
         "messages": [{"role": "system", "content": "You are terse."},
                      {"role": "user", "content": "Name three primes."}]},
        {"timestamp_ms": 900, "input_tokens": 300, "output_tokens": 32},
        {"timestamp_ms": 1200, "input_tokens": 64, "output_tokens": 2},
    ]
    return [json.dumps(x) for x in lines]


def replay_1000(rng):
    lines = []
    t = 0.0
    for _ in range(1000):
        lines.append(json.dumps({"timestamp_ms": round(t, 3), "input_tokens": rng.randint(20, 200),
                                 "output_tokens": rng.randint(2, 16)}))
        t += rng.expovariate(200.0) * 1000.0
    return lines


TOPICS = ["rivers", "prime numbers", "the printing press", "volcanoes", "bread", "chess",
          "glaciers", "the telegraph", "bees", "lighthouses", "tides", "paper"]


def sharegpt(rng):
    convs = []
    for i, topic in enumerate(TOPICS):
        words = " ".join(rng.choice(["short", "clear", "simple", "careful"]) for _ in range(3))
        turns = [{"from": "human", "value": f"Question {i + 1}: explain {topic} in a {words} way."},
                 {"from": "gpt", "value": " ".join(["word"] * rng.randint(5, 40))},
                 {"from": "human", "value": "Thanks, and more?"},
                 {"from": "gpt", "value": "More words here."}]
        if i == 3:  # starts with the model: the first human turn is still the prompt
            turns.insert(0, {"from": "gpt", "value": "Hello, how can I help?"})
        if i == 7:  # no reply: skipped and counted, as vllm bench serve skips it
            turns = turns[:1]
        convs.append({"id": f"fx{i:03d}_0", "conversations": turns})
    return json.dumps(convs, indent=2, ensure_ascii=False).split("\n")


def png_2x2():
    raw = b"".join(b"\x00" + bytes([255, 0, 0] * 2) for _ in range(2))
    def chunk(kind, data):
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 2, 2, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


def dataset_jsonl(bad):
    one_px = "data:image/png;base64," + base64.b64encode(png_2x2()).decode()
    lines = [
        {"prompt": "Name the largest planet of the solar system.", "output_tokens": 12},
        {"prompt": "Write a haiku about autumn rain."},
        {"messages": [{"role": "system", "content": "You are terse."},
                      {"role": "user", "content": "List three prime numbers."}],
         "output_tokens": 6},
        {"prompt": "What colour is this image?", "images": ["dataset-image.png"],
         "output_tokens": 4},
        {"prompt": "And this one?", "images": [one_px], "output_tokens": 4},
    ]
    out = [json.dumps(x) for x in lines]
    if bad:
        out[2] = '{"prompt": "an unterminated line'
    return out


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fixtures", "workloads")
    os.makedirs(out, exist_ok=True)
    files = {
        "mooncake-200.jsonl": mooncake(random.Random(28)),
        "burstgpt.csv": burstgpt(random.Random(29)),
        "azure-code.csv": azure(random.Random(30)),
        "plain.jsonl": plain(random.Random(31)),
        "replay-1000.jsonl": replay_1000(random.Random(32)),
        "lengths.txt": [str(n) for n in (100, 200, 300, 400, 1000)],
        "sharegpt.json": sharegpt(random.Random(33)),
        "dataset.jsonl": dataset_jsonl(False),
        "dataset-bad.jsonl": dataset_jsonl(True),
    }
    with open(os.path.join(out, "dataset-image.png"), "wb") as f:
        f.write(png_2x2())
    for name, lines in files.items():
        with open(os.path.join(out, name), "w", newline="\n") as f:
            f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
