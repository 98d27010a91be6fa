"""Drives `notesoup-history mcp` with the official MCP Python client (PyPI `mcp`), end to end.

Run by mcp_client.rs beside it, which builds the roots and snapshots the tools this writes to --out:
    python mcp_client.py --binary PATH --home DIR --root-flag --claude-root DIR ...
        --big-session ID --big-text FILE --current claude:ID --out FILE
Exits non-zero, with the reason on stderr, at the first check that fails.
"""

import argparse
import asyncio
import json
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.client import Client
from mcp.client.stdio import stdio_client

BUDGET = 32 * 1024


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--binary", required=True)
    p.add_argument("--home", required=True)
    p.add_argument("--cache", required=True)
    p.add_argument("--root", action="append", nargs=2, metavar=("FLAG", "DIR"), default=[])
    p.add_argument("--big-session", required=True)
    p.add_argument("--big-text", required=True)
    p.add_argument("--current", required=True, help="a claude session id for CLAUDE_CODE_SESSION_ID")
    p.add_argument("--out", required=True)
    return p.parse_args()


def server(args, env=None):
    roots = [x for flag, path in args.root for x in (f"--{flag}", path)]
    base = {"HOME": args.home, "XDG_CACHE_HOME": args.cache, "NOTESOUP_HISTORY_INDEX": "off"}
    return StdioServerParameters(command=args.binary, args=[*roots, "mcp"], env={**base, **(env or {})})


def check(condition, what):
    if not condition:
        raise AssertionError(what)


def size(result):
    """The result's bytes as the server sent them (compact JSON, non-ASCII as is)."""
    dumped = result.model_dump(by_alias=True, mode="json", exclude_none=True)
    return len(json.dumps(dumped, ensure_ascii=False, separators=(",", ":")).encode())


async def call(session, tool, arguments):
    result = await session.call_tool(tool, arguments)
    structured = result.structured_content
    check(structured is not None, f"{tool} {arguments}: no structured content")
    text = result.content[0].text
    check(structured["text"] == text, f"{tool} {arguments}: the structured text is the text")
    check(size(result) <= BUDGET, f"{tool} {arguments}: {size(result)} bytes")
    return result, structured


async def main_session(args):
    big_text = open(args.big_text, encoding="utf-8").read()
    calls = 0

    async with stdio_client(server(args)) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            check(init.protocol_version == "2025-11-25", f"negotiated {init.protocol_version}")
            check(init.server_info.name == "notesoup-history", "server name")
            await session.send_ping()

            listed = await session.list_tools()
            tools = [t.model_dump(by_alias=True, mode="json", exclude_none=True) for t in listed.tools]
            check([t["name"] for t in tools] == ["history_list", "history_find", "history_read"], "three tools")
            with open(args.out, "w", encoding="utf-8") as out:
                json.dump(tools, out, indent=2, ensure_ascii=False)

            # The overview, paged on by its `older` recipes, names sessions of all three harnesses,
            # each once.
            _, overview = await call(session, "history_list", {"session": "*", "limit": 100})
            calls += 1
            sessions = [i["session"] for i in overview["items"]]
            page = overview
            while "older" in page:
                check(page["older"]["limit"] == 100, f"the recipe keeps the limit: {page['older']}")
                _, page = await call(session, "history_list", page["older"])
                calls += 1
                sessions += [i["session"] for i in page["items"]]
            check(len(sessions) == len(set(sessions)), "no session twice")
            harnesses = {s.split(":")[0] for s in sessions}
            check(harnesses == {"claude", "codex", "pi"}, f"harnesses {harnesses}")
            for item in overview["items"]:
                check("line" in item and "byte_offset" in item and "resume" in item, f"location {item}")

            # A search across sessions: hits of every role, named by session.
            _, hits = await call(session, "history_list", {"session": "*", "query": "git diff", "roles": ["tool"], "limit": 2})
            calls += 1
            check(len(hits["items"]) == 2 and all(i["role"] == "tool" for i in hits["items"]), "search hits")
            check(hits["has_older"], "more hits exist")

            # Browse one session of each harness and follow its recipe to the older page, then
            # read an item in full.
            for harness in ["claude", "codex", "pi"]:
                first = next(s for s in sessions if s.startswith(harness + ":"))
                seen = []
                args_ = {"session": first, "limit": 1}
                for _ in range(3):
                    result, page = await call(session, "history_list", args_)
                    calls += 1
                    check(not result.is_error, f"{first}: {result.content[0].text}")
                    check(page["session"] == first, f"{first}: canonical session")
                    seqs = [i["seq"] for i in page["items"]]
                    check(not seen or all(s < min(seen) for s in seqs), f"{first}: older page {seqs} after {seen}")
                    seen.extend(seqs)
                    if not page["has_older"]:
                        break
                    recipe = page["older"]
                    # The text shows the recipe as the command line it stands for.
                    # (after the root flags the server was given, which it repeats).
                    older = next((l for l in page["text"].splitlines() if l.startswith("→ older: ")), "")
                    check(older.startswith("→ older: notesoup-history list ")
                          and older.endswith(f" --session {first} --before-seq {recipe['before_seq']} --limit 1"),
                          f"the text shows the recipe: {older}")
                    # The recipe is the next call as it is: the page's limit included.
                    check(recipe.get("limit") == 1, f"the recipe keeps the limit: {recipe}")
                    args_ = recipe
                item = page["items"][0] if page["items"] else None
                if item:
                    _, read = await call(session, "history_read", {"session": first, "seq": item["seq"], "part": item["part"]})
                    calls += 1
                    check(read["item"]["seq"] == item["seq"] and read["session"] == first, f"{first}: read")
                    check(read["neighborhood"]["session"] == first, f"{first}: neighborhood recipe")

            # A ranked search in plain words: sessions best first, each hit's read recipe a
            # history_read call, and the more recipe the next page's history_find call.
            _, found = await call(session, "history_find", {"text": "deploying the api", "limit": 1})
            calls += 1
            check(len(found["sessions"]) == 1 and found["sessions"][0]["rank"] == 1, f"find {found}")
            check(found["terms"] == ["deploy", "api"], f"terms {found['terms']}")
            hit = found["sessions"][0]["best"][0]
            _, read = await call(session, "history_read", hit["read"])
            calls += 1
            check(read["item"]["seq"] == hit["seq"], "a hit's read recipe reads it")
            if found["has_more"]:
                _, more = await call(session, "history_find", found["more"])
                calls += 1
                check(more["sessions"][0]["rank"] == 2, "the more recipe goes on after the page")
            result, error = await call(session, "history_find", {"text": "where did we"})
            calls += 1
            check(result.is_error and error["error"]["code"] == "usage", "a question of stop words only")

            # Errors are tool results with the contract's codes.
            result, error = await call(session, "history_list", {"session": "claude:4f2a0c1e"})
            calls += 1
            check(result.is_error and error["error"]["code"] == "ambiguous_session", f"ambiguous: {error}")
            check(len(error["error"]["candidates"]) == 2, "two candidates")
            result, error = await call(session, "history_read", {"session": "*", "seq": 1})
            calls += 1
            check(result.is_error and error["error"]["code"] == "invalid_session", f"wildcard read: {error}")
            result, error = await call(session, "history_list", {"session": "claude:nothing-like-it"})
            calls += 1
            check(result.is_error and error["error"]["code"] == "unknown_session", f"unknown: {error}")

            # Numbers sent as strings or floats.
            _, two = await call(session, "history_list", {"session": "*", "limit": 2})
            _, two_s = await call(session, "history_list", {"session": "*", "limit": "2"})
            _, two_f = await call(session, "history_list", {"session": "*", "limit": 2.0})
            calls += 3
            check(two["items"] == two_s["items"] == two_f["items"] and len(two["items"]) == 2, "2, \"2\" and 2.0")

            # An event far over the budget: cut, with where to continue; continuing gives it all.
            big = f"claude:{args.big_session}"
            shown, arguments, parts = "", {"session": big, "seq": 1}, 0
            while True:
                result, read = await call(session, "history_read", arguments)
                calls += 1
                parts += 1
                shown += read["item"]["text"]
                if read["next_offset_chars"] is None:
                    break
                check(read["item"]["truncated"], "a cut read says so")
                arguments = read["next"]
            check(shown == big_text, f"the continued read gives the whole text ({len(shown)} of {len(big_text)})")
            check(parts >= 4, f"{len(big_text)} characters in {parts} answers")

            # The session browse of that event keeps within the budget too.
            _, page = await call(session, "history_list", {"session": big})
            calls += 1
            check(page["items"][0]["truncated"] and len(page["items"][0]["text"]) > 1000, "a long item is cut, not emptied")
            check(calls >= 15, f"{calls} calls in one connection")


async def current_session(args):
    """An omitted session is the caller's own, from what Claude Code sets."""
    env = {"CLAUDE_CODE_SESSION_ID": args.current}
    async with stdio_client(server(args, env)) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            _, page = await call(session, "history_list", {"limit": 3})
            check(page["session"] == f"claude:{args.current}", f"current session {page.get('session')}")
            check(page["notice"].startswith(f"listing the current session claude:{args.current} (named by CLAUDE_CODE_SESSION_ID)"), "the notice names the session and its variable")
            check(page["text"].split("\n\n", 1)[1].startswith("seq "), "implicit headers leave the session out")


async def auto_negotiation(args):
    """The high-level client probes server/discover first and falls back to initialize."""
    async with Client(server(args)) as client:
        tools = await client.list_tools()
        check({t.name for t in tools.tools} == {"history_list", "history_find", "history_read"}, "tools via Client")
        result = await client.call_tool("history_list", {"session": "pi:*"})
        check(not result.is_error and result.structured_content["items"], "a call via Client")


async def main():
    args = parse_args()
    await main_session(args)
    await current_session(args)
    await auto_negotiation(args)
    print("ok")


def failures(error):
    """The errors inside the task groups the client runs in."""
    inner = getattr(error, "exceptions", None)
    if inner is None:
        yield error
    else:
        for e in inner:
            yield from failures(e)


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except Exception as error:
        for e in failures(error):
            kind = "check failed" if isinstance(e, AssertionError) else type(e).__name__
            print(f"{kind}: {e}", file=sys.stderr)
        sys.exit(1)
