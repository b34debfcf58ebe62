"""Agents that race on Legwork's products. Each sees only what every agent sees (the riddle or
task prompt, the seed URL, the tool list) and acts only through the tool registry."""
