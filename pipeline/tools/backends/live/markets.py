"""Live country facts (REST Countries), crypto prices (Binance public klines) and stock prices.

* countries: REST Countries v3.1 (``restcountries_url``), exact name first, then partial
  name, then ISO alpha code.
* crypto: Binance public market data (``binance_url``, default the market-data-only host
  data-api.binance.vision), daily kline of ``<SYMBOL>USDT``. Prices are in USDT, taken as
  USD (a dollar stablecoin; the source says so); volume is the quote-asset (USDT) volume.
* stocks: there is no keyless source any more (Stooq's CSV download now serves a browser
  challenge to scripts), so the live stock tools need an Alpha Vantage key
  (``settings.live["alphavantage_key"]`` or env ``ALPHAVANTAGE_API_KEY``; ``alphavantage_url``).
  Without one they raise ``LiveNotConfigured``, which is not recorded in the cache.
"""
from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from urllib.parse import quote

from pipeline.tools.backends.live.http import LiveServiceError, get_json, live_setting
from pipeline.tools.errors import ToolError
from pipeline.tools.registry import BackendContext, implements
from pipeline.tools.spec import TOOLS

RESTCOUNTRIES_URL = "https://restcountries.com/v3.1"
BINANCE_URL = "https://data-api.binance.vision"
ALPHAVANTAGE_URL = "https://www.alphavantage.co/query"


class LiveNotConfigured(LiveServiceError):
    """The live backend needs a key or URL the settings do not give."""


# --- countries -------------------------------------------------------------------------------

def _country(ctx: BackendContext, name: str) -> dict:
    base = live_setting(ctx, "restcountries_url", RESTCOUNTRIES_URL).rstrip("/")
    fields = {"fields": "name,population,area,cca2,cca3"}
    attempts = [(f"{base}/name/{quote(name)}", {**fields, "fullText": "true"}),
                (f"{base}/name/{quote(name)}", fields)]
    if len(name) in (2, 3) and name.isalpha():
        attempts.insert(0, (f"{base}/alpha/{quote(name)}", fields))
    for url, params in attempts:
        found = get_json(ctx, "restcountries", url, params, not_found_ok=True)
        if isinstance(found, dict) and found.get("name"):
            found = [found]
        if isinstance(found, list) and found:
            exact = [c for c in found if name.lower() in (c["name"]["common"].lower(), c["name"]["official"].lower())]
            if len(found) == 1 or exact:
                return (exact or found)[0]
            names = ", ".join(sorted(c["name"]["common"] for c in found))
            raise ToolError(f"{name!r} matches several countries: {names}")
    raise ToolError(f"no country named {name!r}")


_COUNTRY_SOURCE = "REST Countries v3.1 (live)"


@implements("countries_population", "live")
def countries_population(args: dict, ctx: BackendContext) -> dict:
    country = _country(ctx, args["country"])
    return {"country": country["name"]["common"], "country_code": country.get("cca2"),
            "population": int(country["population"]), "units": dict(TOOLS["countries_population"]["units"]),
            "provenance": "live", "source": _COUNTRY_SOURCE}


@implements("countries_area", "live")
def countries_area(args: dict, ctx: BackendContext) -> dict:
    country = _country(ctx, args["country"])
    return {"country": country["name"]["common"], "country_code": country.get("cca2"),
            "area_km2": float(country["area"]), "units": dict(TOOLS["countries_area"]["units"]),
            "provenance": "live", "source": _COUNTRY_SOURCE}


# --- crypto ----------------------------------------------------------------------------------

_COIN_NAMES = {"bitcoin": "BTC", "ethereum": "ETH", "ether": "ETH", "solana": "SOL", "cardano": "ADA",
               "dogecoin": "DOGE", "ripple": "XRP", "litecoin": "LTC", "polkadot": "DOT", "tron": "TRX",
               "binance coin": "BNB", "chainlink": "LINK", "avalanche": "AVAX"}


def _pair(symbol: str) -> tuple[str, str]:
    coin = symbol.strip().upper().replace("-", "").replace("/", "")
    coin = _COIN_NAMES.get(symbol.strip().lower(), coin)
    for quote_asset in ("USDT", "USD"):
        if coin.endswith(quote_asset) and len(coin) > len(quote_asset):
            coin = coin[: -len(quote_asset)]
            break
    return coin, f"{coin}USDT"


def _kline(ctx: BackendContext, symbol: str, day: str) -> tuple[str, list]:
    coin, pair = _pair(symbol)
    start = datetime.combine(date.fromisoformat(day), datetime.min.time(), tzinfo=UTC)
    start_ms = int(start.timestamp() * 1000)
    end_ms = int((start + timedelta(days=1)).timestamp() * 1000) - 1
    base = live_setting(ctx, "binance_url", BINANCE_URL).rstrip("/")
    rows = get_json(ctx, "binance", f"{base}/api/v3/klines",
                    {"symbol": pair, "interval": "1d", "startTime": start_ms, "endTime": end_ms, "limit": 1})
    if isinstance(rows, dict):  # {"code": -1121, "msg": "Invalid symbol."}
        raise ToolError(f"Binance: {rows.get('msg', rows)} ({pair})")
    if not rows or int(rows[0][0]) != start_ms:
        raise ToolError(f"Binance has no daily {pair} candle for {day}")
    return coin, rows[0]


_CRYPTO_SOURCE = "Binance public klines, {pair} daily candle, UTC day (live; USDT taken as USD)"


@implements("crypto_historical_price", "live")
def crypto_historical_price(args: dict, ctx: BackendContext) -> dict:
    coin, row = _kline(ctx, args["symbol"], args["date"])
    return {"symbol": coin, "date": args["date"], "open": float(row[1]), "high": float(row[2]),
            "low": float(row[3]), "close": float(row[4]), "units": dict(TOOLS["crypto_historical_price"]["units"]),
            "provenance": "live", "source": _CRYPTO_SOURCE.format(pair=f"{coin}USDT")}


@implements("crypto_volume", "live")
def crypto_volume(args: dict, ctx: BackendContext) -> dict:
    coin, row = _kline(ctx, args["symbol"], args["date"])
    return {"symbol": coin, "date": args["date"], "volume": float(row[7]),
            "units": dict(TOOLS["crypto_volume"]["units"]), "provenance": "live",
            "source": _CRYPTO_SOURCE.format(pair=f"{coin}USDT") + ", quote-asset volume"}


# --- stocks ----------------------------------------------------------------------------------

def _stock_day(ctx: BackendContext, symbol: str, day: str) -> dict:
    key = live_setting(ctx, "alphavantage_key", env="ALPHAVANTAGE_API_KEY")
    if not key:
        raise LiveNotConfigured("no free live stock backend (Stooq's keyless CSV now answers scripts with a "
                                "browser challenge); bring an Alpha Vantage key: settings.live"
                                "['alphavantage_key'] or ALPHAVANTAGE_API_KEY")
    data = get_json(ctx, "alphavantage", live_setting(ctx, "alphavantage_url", ALPHAVANTAGE_URL), {
        "function": "TIME_SERIES_DAILY", "symbol": symbol.upper(),
        "outputsize": live_setting(ctx, "alphavantage_outputsize", "full"), "apikey": key})
    if "Error Message" in data:
        raise ToolError(f"Alpha Vantage: {data['Error Message']}")
    series = data.get("Time Series (Daily)")
    if series is None:  # "Note" (rate limit) or "Information" (premium-only request)
        raise LiveServiceError(f"Alpha Vantage: {data.get('Note') or data.get('Information') or data}")
    row = series.get(day)
    if row is None:
        raise ToolError(f"Alpha Vantage has no {symbol.upper()} trading day {day} (weekend, holiday or out of range)")
    return row


_STOCK_SOURCE = "Alpha Vantage TIME_SERIES_DAILY (live, unadjusted)"


@implements("stock_historical_price", "live")
def stock_historical_price(args: dict, ctx: BackendContext) -> dict:
    row = _stock_day(ctx, args["symbol"], args["date"])
    return {"symbol": args["symbol"].upper(), "date": args["date"], "open": float(row["1. open"]),
            "high": float(row["2. high"]), "low": float(row["3. low"]), "close": float(row["4. close"]),
            "units": dict(TOOLS["stock_historical_price"]["units"]), "provenance": "live", "source": _STOCK_SOURCE}


@implements("stock_volume", "live")
def stock_volume(args: dict, ctx: BackendContext) -> dict:
    row = _stock_day(ctx, args["symbol"], args["date"])
    return {"symbol": args["symbol"].upper(), "date": args["date"], "volume": int(row["5. volume"]),
            "units": dict(TOOLS["stock_volume"]["units"]), "provenance": "live", "source": _STOCK_SOURCE}
