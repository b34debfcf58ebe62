"""Legwork's Inspect AI tasks: ``inspect eval legwork/race_legs`` (and ``legwork/math``, ``legwork/atp``,
``legwork/os``, ``legwork/git``), installed with the project through the ``inspect_ai`` entry point
(``pipeline.agents.inspect._registry``).

Legs race with Inspect's ``react()`` agent over the tools of ``python -m pipeline.tools serve``
(``mcp_server_stdio``, one server per sample, which writes the trial's tool log and ``trial.json``
under ``runs``); the passcode is judged exactly, with FA, PVR and RCR from ``pipeline.scoring`` in
the score's metadata. Task families race through Legwork's own runtime (``pipeline.agents.runtime``:
the one LLM loop, each family's environment, tools and sandbox) with Inspect's model behind it
(``InspectClient``); each is judged by its family's checker. Either way the trials land under
``runs`` in the layout ``pipeline.score`` reads, and the scorer's figures are ``pipeline.score``'s on
those trials.

Imports ``inspect_ai`` (an optional dependency): only this package does.
"""
