"""Live weather from Open-Meteo (no key): the historical archive (ERA5 reanalysis) and the forecast.

Open-Meteo reports snowfall in centimetres and sunshine in seconds; the tools' canonical
units are millimetres and hours, so values are converted from the units the response
itself declares (``daily_units``). Base URLs: ``settings.live["open_meteo_archive_url"]``
and ``settings.live["open_meteo_forecast_url"]``.
"""
from __future__ import annotations

from pipeline.tools.backends.live.http import get_json, live_setting
from pipeline.tools.backends.live.maps import resolve_place
from pipeline.tools.errors import ToolError
from pipeline.tools.registry import BackendContext, implements
from pipeline.tools.spec import TOOLS

ARCHIVE_URL = "https://archive-api.open-meteo.com/v1/archive"
FORECAST_URL = "https://api.open-meteo.com/v1/forecast"

# tool field -> (Open-Meteo daily variable, canonical unit)
HISTORICAL_FIELDS = {
    "temp_max_c": ("temperature_2m_max", "degC"), "temp_min_c": ("temperature_2m_min", "degC"),
    "temp_mean_c": ("temperature_2m_mean", "degC"), "precipitation_mm": ("precipitation_sum", "mm"),
    "snowfall_mm": ("snowfall_sum", "mm"), "sunshine_h": ("sunshine_duration", "h"),
}
FORECAST_FIELDS = {k: HISTORICAL_FIELDS[k] for k in ("temp_max_c", "temp_min_c", "precipitation_mm")}

# (declared unit, canonical unit) -> factor
_FACTORS = {("°C", "degC"): 1.0, ("mm", "mm"): 1.0, ("cm", "mm"): 10.0, ("s", "h"): 1 / 3600, ("h", "h"): 1.0,
            ("inch", "mm"): 25.4}


def _daily(data: dict, fields: dict) -> list[dict]:
    if data.get("error"):
        raise ToolError(f"Open-Meteo: {data.get('reason')}")
    daily, units = data["daily"], data.get("daily_units", {})
    rows = []
    for i, day in enumerate(daily["time"]):
        row = {"date": day}
        for name, (variable, canonical) in fields.items():
            value = daily[variable][i]
            declared = units.get(variable, canonical)
            factor = _FACTORS.get((declared, canonical))
            if factor is None:
                raise ToolError(f"Open-Meteo sent {variable} in {declared!r}, expected a unit convertible to "
                                f"{canonical}")
            row[name] = None if value is None else round(value * factor, 3)
        rows.append(row)
    return rows


@implements("weather_historical", "live")
def weather_historical(args: dict, ctx: BackendContext) -> dict:
    lat, lng = resolve_place(args["location"], ctx)
    start = args["start_date"]
    end = args.get("end_date") or start
    if end < start:
        raise ToolError(f"end_date {end} is before start_date {start}")
    params = {"latitude": lat, "longitude": lng, "start_date": start, "end_date": end, "timezone": "auto",
              "daily": ",".join(variable for variable, _ in HISTORICAL_FIELDS.values())}
    data = get_json(ctx, "open_meteo", live_setting(ctx, "open_meteo_archive_url", ARCHIVE_URL), params)
    rows = _daily(data, HISTORICAL_FIELDS)
    if rows and all(all(row[k] is None for k in HISTORICAL_FIELDS) for row in rows):
        raise ToolError(f"Open-Meteo archive has no data for {start}..{end} yet")
    return {"location": {"lat": lat, "lng": lng}, "daily": rows, "units": dict(TOOLS["weather_historical"]["units"]),
            "provenance": "live", "source": "Open-Meteo Historical Weather API (ERA5 reanalysis, live)"}


@implements("weather_forecast", "live")
def weather_forecast(args: dict, ctx: BackendContext) -> dict:
    lat, lng = resolve_place(args["location"], ctx)
    params = {"latitude": lat, "longitude": lng, "forecast_days": int(args.get("days", 3)), "timezone": "auto",
              "daily": ",".join(variable for variable, _ in FORECAST_FIELDS.values())}
    data = get_json(ctx, "open_meteo", live_setting(ctx, "open_meteo_forecast_url", FORECAST_URL), params)
    return {"location": {"lat": lat, "lng": lng}, "daily": _daily(data, FORECAST_FIELDS),
            "units": dict(TOOLS["weather_forecast"]["units"]), "provenance": "live",
            "source": "Open-Meteo Forecast API (live)"}
