"""weather_historical (station series or simulated) and weather_forecast (always simulated)."""
from __future__ import annotations

import datetime as dt

from pipeline.tools.backends.offline._common import parse_date, resolve_place, result, world_dir
from pipeline.tools.errors import ToolError
from pipeline.tools.registry import BackendContext, implements
from pipeline.world import weather
from pipeline.world.elevation import elevation_grid

# Offline forecasts have no "today" (no wall clock): they are issued for a fixed reference date.
FORECAST_ISSUED = dt.date(2026, 1, 1)


@implements("weather_historical", "offline")
def weather_historical(args: dict, ctx: BackendContext) -> dict:
    start = parse_date(args["start_date"], "start_date")
    end = parse_date(args.get("end_date") or args["start_date"], "end_date")
    if end < start:
        raise ToolError(f"end_date {end} is before start_date {start}")
    if (end - start).days + 1 > weather.MAX_DAYS:
        raise ToolError(f"at most {weather.MAX_DAYS} days per call; split the range")
    lat, lng, label = resolve_place(ctx, args["location"], "location")
    days = [start + dt.timedelta(days=k) for k in range((end - start).days + 1)]
    location = {"lat": lat, "lng": lng, "name": label}
    series = weather.station_series(world_dir(ctx))
    near = series.nearest(lat, lng)
    if near is not None:
        station, distance_km = near
        inside = [station.first <= d.isoformat() <= station.last for d in days]
        if all(inside):
            try:
                daily = [series.observed(station, d.isoformat()) for d in days]
            except KeyError as exc:
                raise ToolError(f"station {station.id} ({station.city}) has no record for {exc.args[0]}") from None
            return result("weather_historical", {
                "location": location, "daily": daily,
                "station": {"id": station.id, "city": station.city, "distance_km": round(distance_km, 1)},
                "note": "temp_mean_c is the mean of max and min; fields missing from the source are null",
            }, "offline-data", station.source)
        if any(inside):
            raise ToolError(f"the range {start}..{end} only partly overlaps the observations of station {station.id} "
                            f"({station.city}, {station.first}..{station.last}); ask inside or outside that period")
    elevation_m = elevation_grid().elevation_m(lat, lng)
    daily = [weather.simulated_day(lat, lng, elevation_m, d) for d in days]
    return result("weather_historical", {"location": location, "daily": daily}, "simulated", weather.SIM_SOURCE)


@implements("weather_forecast", "offline")
def weather_forecast(args: dict, ctx: BackendContext) -> dict:
    lat, lng, label = resolve_place(ctx, args["location"], "location")
    elevation_m = elevation_grid().elevation_m(lat, lng)
    daily = []
    for k in range(int(args.get("days", 3))):
        d = weather.simulated_day(lat, lng, elevation_m, FORECAST_ISSUED + dt.timedelta(days=k), stream="forecast")
        daily.append({key: d[key] for key in ("date", "temp_max_c", "temp_min_c", "precipitation_mm")})
    return result("weather_forecast", {"location": {"lat": lat, "lng": lng, "name": label},
                                       "issued": FORECAST_ISSUED.isoformat(), "daily": daily},
                  "simulated", weather.SIM_SOURCE)
