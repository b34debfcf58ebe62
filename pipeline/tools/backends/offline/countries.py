"""countries_population, countries_area and countries_list from the countryinfo extract."""
from __future__ import annotations

from pipeline.tools.backends.offline._common import result, world_dir
from pipeline.tools.errors import ToolError
from pipeline.tools.registry import BackendContext, implements
from pipeline.world.countries import Country, country_table
from pipeline.world.gazetteer import statistics_countries


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


@implements("countries_list", "offline")
def countries_list(args: dict, ctx: BackendContext) -> dict:
    offset, limit = int(args.get("offset", 0)), int(args.get("limit", 50))
    listed = statistics_countries(world_dir(ctx), ctx.settings.derived_dir)
    page = listed[offset:offset + limit]
    end = offset + len(page)
    return result("countries_list", {
        "total": len(listed), "offset": offset, "next_offset": end if end < len(listed) else None,
        "countries": [{"name": c.name, "iso2": c.iso2, "capital": c.capital, "lat": c.lat, "lng": c.lng}
                      for c in page],
    }, "offline-data", f"{country_table(world_dir(ctx)).source}; capitals' points as maps_geocode gives them")
