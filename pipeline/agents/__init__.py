"""Agents that race on Legwork's products, and the runtime they race in. Each agent sees only what every
agent sees (the riddle or task prompt, the seed URL, the tool list) and acts only through the tool registry.

  trial.py         the one trial record and writer (``trial.json``, tool log, tokens, budget, stop reason)
  environments.py  one environment per product (legs, math, atp, os, git), each with its oracle and random
                   policies, judge, reply check and reflection trigger; registered by name
  loop.py          the one LLM loop (tool calls, budgets, the overrun note)
  runtime.py       agents registered by name (oracle, random, solver, llm, modular); trial and race runners
  modular.py       CapaBench's modular agent; solver.py the riddle-only solver; tasks.py task-set races
  inspect/         the Inspect AI tasks (``inspect eval legwork/race_legs``)

``pipeline.race`` is the command line over this package; nothing here imports it.
"""
