"""Stock and crypto tools: bokeh sample data for five stocks, seeded simulation otherwise."""
from __future__ import annotations

from pipeline.tools.backends.offline._common import parse_date, result
from pipeline.tools.errors import ToolError
from pipeline.tools.registry import BackendContext, implements
from pipeline.world import markets


def _stock_bar(args: dict) -> tuple[markets.DailyBar, str, str, str]:
    symbol = args["symbol"].strip().upper()
    day = parse_date(args["date"])
    table = markets.stock_table()
    if table.covers(symbol):
        try:
            return table.bar(symbol, day.isoformat()), symbol, "offline-data", table.source
        except ValueError as exc:
            raise ToolError(str(exc)) from None
    if day.weekday() >= 5:
        raise ToolError(f"{symbol}: {day.isoformat()} is a {day.strftime('%A')}, not a trading day")
    return markets.simulated_bar("stock", symbol, day), symbol, "simulated", markets.SIM_SOURCE


def _crypto_bar(args: dict) -> tuple[markets.DailyBar, str]:
    symbol = args["symbol"].strip().upper()
    symbol = markets.CRYPTO_ALIASES.get(symbol, symbol)
    day = parse_date(args["date"])
    launch = markets.CRYPTO_LAUNCH.get(symbol)
    if launch and day.isoformat() < launch:
        raise ToolError(f"{symbol}: no trading before {launch}")
    return markets.simulated_bar("crypto", symbol, day), symbol


@implements("stock_historical_price", "offline")
def stock_historical_price(args: dict, ctx: BackendContext) -> dict:
    bar, symbol, provenance, source = _stock_bar(args)
    return result("stock_historical_price", {"symbol": symbol, "date": bar.date, "open": bar.open, "high": bar.high,
                                             "low": bar.low, "close": bar.close}, provenance, source)


@implements("stock_volume", "offline")
def stock_volume(args: dict, ctx: BackendContext) -> dict:
    bar, symbol, provenance, source = _stock_bar(args)
    return result("stock_volume", {"symbol": symbol, "date": bar.date, "volume": int(bar.volume)}, provenance, source)


@implements("crypto_historical_price", "offline")
def crypto_historical_price(args: dict, ctx: BackendContext) -> dict:
    bar, symbol = _crypto_bar(args)
    return result("crypto_historical_price", {"symbol": symbol, "date": bar.date, "open": bar.open, "high": bar.high,
                                              "low": bar.low, "close": bar.close}, "simulated", markets.SIM_SOURCE)


@implements("crypto_volume", "offline")
def crypto_volume(args: dict, ctx: BackendContext) -> dict:
    bar, symbol = _crypto_bar(args)
    return result("crypto_volume", {"symbol": symbol, "date": bar.date, "volume": bar.volume}, "simulated",
                  markets.SIM_SOURCE)
