#!/usr/bin/env python3
"""Mean tokens of the rendered blocks of a recall results file, counted as agentmem's
HeuristicCounter does (ceil(chars / 4)); a question with no block counts 0.

  block_tokens.py results.jsonl
"""
import json, sys

rows=[json.loads(l) for l in open(sys.argv[1])]
t=[-(-len(r['block'] or '')//4) for r in rows]
print(f"mean block tokens {sum(t)/len(t):.1f}  max {max(t)}")
