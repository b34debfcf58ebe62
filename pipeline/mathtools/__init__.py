"""The math tools' code: the safe sympy calculator (``safe_eval``) and the knowledge-point corpus with its
BM25 search (``search``, corpus in ``knowledge/``).

Below both the tool backends (``calculator``, ``math_knowledge_search``) and the MATH task set (answer
checking, golden traces), which use the same code. Imports nothing first-party.
"""
