"""The eight stages of leg generation; each module has ``run(leg, ctx) -> leg`` and knows
nothing of Prefect, files or the CLI. Their order is ``base.STAGES``; the driver
(``flows.generate.STAGE_MODULES``) maps each name to its module."""
