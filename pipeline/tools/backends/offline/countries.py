"""countries_population and countries_area from the countryinfo extract."""
from __future__ import annotations

from pipeline.tools.backends.offline._common import result, world_dir
from pipeline.tools.errors import ToolError
from pipeline.tools.registry import BackendContext, implements
from pipeline.world.countries import Country, country_table


def _country(args: dict, ctx: BackendContext) -> tuple[Country, str]:
    table = country_table(world_dir(ctx))
    country = table.lookup(args["country"])
    if country is None:
        raise ToolError(f"unknown country {args['country']!r} (offline data: {len(table.by_iso2)} countries "
                        "from countryinfo; try the common English name)")
    return country, table.source


@implements("countries_population", "offline")
def countries_population(args: dict, ctx: BackendContext) -> dict:
    country, source = _country(args, ctx)
    if country.population is None:
        raise ToolError(f"no population figure for {country.name} in the offline data")
    return result("countries_population", {"country": country.name, "country_code": country.iso2,
                                           "population": int(country.population)}, "offline-data", source)


@implements("countries_area", "offline")
def countries_area(args: dict, ctx: BackendContext) -> dict:
    country, source = _country(args, ctx)
    if country.area_km2 is None:
        raise ToolError(f"no area figure for {country.name} in the offline data")
    return result("countries_area", {"country": country.name, "country_code": country.iso2,
                                     "area_km2": country.area_km2}, "offline-data", source)
