"""Drives `notesoup-history mcp` with the official MCP Python client (PyPI `mcp`), end to end.

Run by mcp_client.rs beside it, which builds the roots and snapshots the tools this writes to --out:
    python mcp_client.py --binary PATH --home DIR --root FLAG DIR ... --demo-root FLAG DIR ...
        --big-session ID --big-text FILE --current claude:ID --out FILE
Exits non-zero, with the reason on stderr, at the first check that fails.

The client names itself as Claude Code does (`claude-code`), which gets the page as structured
content, or as pi's adapter does (`pi-mcp-…`), which gets it as text; `agents_eye` replays what
a model does to answer "what did we decide about X in an earlier session" on the demo, in both
forms, and counts the bytes.
"""

import argparse
import asyncio
import json
import sys
import traceback

import re

from mcp import ClientSession, StdioServerParameters, types
from mcp.client.client import Client
from mcp.client.stdio import stdio_client

BUDGET = 32 * 1024


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--binary", required=True)
    p.add_argument("--home", required=True)
    p.add_argument("--cache", required=True)
    p.add_argument("--root", action="append", nargs=2, metavar=("FLAG", "DIR"), default=[])
    p.add_argument("--demo-root", action="append", nargs=2, metavar=("FLAG", "DIR"), default=[])
    p.add_argument("--samples-root", action="append", nargs=2, metavar=("FLAG", "DIR"), default=[])
    p.add_argument("--big-session", required=True)
    p.add_argument("--big-text", required=True)
    p.add_argument("--current", required=True, help="a claude session id for CLAUDE_CODE_SESSION_ID")
    p.add_argument("--out", required=True)
    return p.parse_args()


def server(args, env=None, roots=None):
    roots = [x for flag, path in (roots or args.root) for x in (f"--{flag}", path)]
    base = {"HOME": args.home, "XDG_CACHE_HOME": args.cache, "NOTESOUP_HISTORY_INDEX": "off"}
    return StdioServerParameters(command=args.binary, args=[*roots, "mcp"], env={**base, **(env or {})})


def check(condition, what):
    if not condition:
        raise AssertionError(what)


def size(result):
    """The result's bytes as the server sent them (compact JSON, non-ASCII as is)."""
    dumped = result.model_dump(by_alias=True, mode="json", exclude_none=True)
    return len(json.dumps(dumped, ensure_ascii=False, separators=(",", ":")).encode())


CLAUDE = types.Implementation(name="claude-code", version="2.1.200")
PI = types.Implementation(name="pi-mcp-notesoup-history", version="1.0.0")


def event_texts(value, out):
    """Every text of an event in a structured page."""
    if isinstance(value, dict):
        if "seq" in value and "role" in value and isinstance(value.get("text"), str):
            out.append(value["text"])
        for v in value.values():
            event_texts(v, out)
    elif isinstance(value, list):
        for v in value:
            event_texts(v, out)
    return out


def once(result, what):
    """No text of an event twice in one response (a long text once, whatever its form)."""
    dumped = json.dumps(result.model_dump(by_alias=True, mode="json", exclude_none=True), ensure_ascii=False)
    structured = result.structured_content
    texts = event_texts(structured, []) if structured else []
    for t in texts:
        if len(t) < 24:
            continue
        needle = json.dumps(t, ensure_ascii=False)[1:-1]
        # Forked sessions can hold the same event: once per event on the page.
        check(dumped.count(needle) == texts.count(t), f"{what}: an event text twice: {t[:60]!r}")
    if structured is not None:
        said = result.content[0].text if result.content else ""
        check(all(t[:40] not in said for t in texts if len(t) >= 24), f"{what}: the text repeats the page: {said[:80]!r}")


async def call(session, tool, arguments):
    result = await session.call_tool(tool, arguments)
    structured = result.structured_content
    check(structured is not None, f"{tool} {arguments}: no structured content")
    check("text" not in structured, f"{tool} {arguments}: the page carries a copy of its text")
    check(size(result) <= BUDGET, f"{tool} {arguments}: {size(result)} bytes")
    once(result, f"{tool} {arguments}")
    return result, structured


async def call_text(session, tool, arguments):
    """A call from a client that shows the text: the page as text, once."""
    result = await session.call_tool(tool, arguments)
    check(result.structured_content is None, f"{tool} {arguments}: structured content for a text client")
    check(len(result.content) == 1, f"{tool} {arguments}: one text")
    check(size(result) <= BUDGET, f"{tool} {arguments}: {size(result)} bytes")
    return result, result.content[0].text


RECIPE = re.compile(r"→ ([a-z ]+): (history_(?:list|read|find))\((\{.*\})\)$", re.M)


def recipes(text):
    """The recipes of a text answer: name → (tool, arguments)."""
    return {name: (tool, json.loads(arguments)) for name, tool, arguments in RECIPE.findall(text)}


async def main_session(args):
    big_text = open(args.big_text, encoding="utf-8").read()
    calls = 0

    async with stdio_client(server(args)) as (read, write):
        async with ClientSession(read, write, client_info=CLAUDE) as session:
            init = await session.initialize()
            check(init.protocol_version == "2025-11-25", f"negotiated {init.protocol_version}")
            check(init.server_info.name == "notesoup-history", "server name")
            await session.send_ping()

            listed = await session.list_tools()
            tools = [t.model_dump(by_alias=True, mode="json", exclude_none=True) for t in listed.tools]
            check([t["name"] for t in tools] == ["history_list", "history_find", "history_read"], "three tools")
            with open(args.out, "w", encoding="utf-8") as out:
                json.dump(tools, out, indent=2, ensure_ascii=False)

            # The overview, paged on by its `older` recipes, names sessions of every harness,
            # each once.
            _, overview = await call(session, "history_list", {"session": "*", "limit": 100})
            calls += 1
            sessions = [i["session"] for i in overview["items"]]
            page = overview
            while "older" in page:
                older = page["older"]["history_list"]
                check(older["limit"] == 100, f"the recipe keeps the limit: {older}")
                _, page = await call(session, "history_list", older)
                calls += 1
                sessions += [i["session"] for i in page["items"]]
            check(len(sessions) == len(set(sessions)), "no session twice")
            harnesses = {s.split(":")[0] for s in sessions}
            check(
                harnesses == {"claude", "codex", "pi", "omp", "opencode", "gemini", "copilot"},
                f"harnesses {harnesses}",
            )
            for item in overview["items"]:
                check("line" not in item and "path" not in item and "resume" not in item, f"compact {item}")
                # A Gemini CLI sub-agent's recording cannot be resumed: it has no resume.
                resumable = not item["session"].startswith("gemini:sub-")
                check(not resumable or "resume" in overview["sessions"][item["session"]], f"resume once per session {item}")
            _, verbose = await call(session, "history_list", {"session": "*", "limit": 3, "verbose": True})
            calls += 1
            for item in verbose["items"]:
                check("line" in item and "byte_offset" in item and "resume" in item, f"verbose location {item}")

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
                    recipe = page["older"]["history_list"]
                    # The recipe is the next call as it is: the page's limit included.
                    check(recipe.get("limit") == 1, f"the recipe keeps the limit: {recipe}")
                    args_ = recipe
                item = page["items"][0] if page["items"] else None
                if item:
                    _, read = await call(session, "history_read", {"session": first, "seq": item["seq"], "part": item["part"]})
                    calls += 1
                    check(read["item"]["seq"] == item["seq"] and read["session"] == first, f"{first}: read")
                    check(read["neighborhood"]["history_list"]["session"] == first, f"{first}: neighborhood recipe")

            # A ranked search in plain words: sessions best first, each hit's read recipe a
            # history_read call, and the more recipe the next page's history_find call.
            _, found = await call(session, "history_find", {"text": "deploying the api", "limit": 1})
            calls += 1
            check(len(found["sessions"]) == 1 and found["sessions"][0]["rank"] == 1, f"find {found}")
            check(found["terms"] == ["deploy", "api"], f"terms {found['terms']}")
            hit = found["sessions"][0]["best"][0]
            _, read = await call(session, "history_read", hit["read"]["history_read"])
            calls += 1
            check(read["item"]["seq"] == hit["seq"], "a hit's read recipe reads it")
            if found["has_more"]:
                _, more = await call(session, "history_find", found["more"]["history_find"])
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
                arguments = read["next"]["history_read"]
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
        async with ClientSession(read, write, client_info=CLAUDE) as session:
            await session.initialize()
            _, page = await call(session, "history_list", {"limit": 3})
            check(page["session"] == f"claude:{args.current}", f"current session {page.get('session')}")
            check(page["notice"].startswith(f"listing the current session claude:{args.current} (named by CLAUDE_CODE_SESSION_ID)"), "the notice names the session and its variable")
    async with stdio_client(server(args, env)) as (read, write):
        async with ClientSession(read, write, client_info=PI) as session:
            await session.initialize()
            _, text = await call_text(session, "history_list", {"limit": 3})
            check(text.split("\n\n", 1)[1].startswith("seq "), "implicit headers leave the session out")
            check('session: "*" lists every session' in text, f"in the tools' terms: {text[:200]}")
            steps = recipes(text)
            check(steps["expand"][0] == "history_list" and "after_seq" in steps["expand"][1], f"a recipe is the call: {steps}")
            _, expanded = await call_text(session, *steps["expand"])
            check("seq 2 | tool" in expanded, f"the expand recipe lists the run: {expanded[:200]}")


# What the model is asked: "what did we decide about the panic in id.Generate, in an earlier
# session?" It works in another session of the demo, which Claude Code names to the server.
QUESTION = "id.Generate"
HERE = "parallel-tool-results"
EXCHANGE_BUDGET = 12 * 1024


async def agents_eye(args):
    """The calls a model makes to answer it, as Claude Code's model sees them (structured) and
    as pi's does (text): the natural call, which says what every session holds; the sessions
    view, to pick one; the read of its best hit; the events around it. The whole exchange takes
    under 12 KiB, and no response carries an event's text twice."""
    env = {"CLAUDE_CODE_SESSION_ID": HERE}
    demo = server(args, env, roots=args.demo_root)
    sizes = {}

    async with stdio_client(demo) as (read, write):
        async with ClientSession(read, write, client_info=CLAUDE) as session:
            await session.initialize()
            spent = []
            # 1. The natural call: the current session only. It has nothing, and says what
            #    session: "*" has, with the call.
            result, page = await call(session, "history_list", {"query": QUESTION})
            spent.append(size(result))
            check(page["items"] == [], f"nothing here: {page}")
            check('session: "*" has ' in page["notice"], f"the notice counts every session: {page['notice']}")
            everywhere = page["every_session"]["history_list"]
            check(everywhere == {"query": QUESTION, "session": "*"}, f"the call to make: {everywhere}")
            # 2. Which session: the sessions view of that call.
            result, found = await call(session, "history_list", {**everywhere, "sessions": True, "limit": 3})
            spent.append(size(result))
            best = max(found["sessions"], key=lambda s: s["hits"])
            check(best["session"].startswith("claude:70fc6d83"), f"the review session: {best['session']}")
            # 3. Read its best hit in full.
            result, hit = await call(session, "history_read", best["read"]["history_read"])
            spent.append(size(result))
            check(QUESTION in hit["item"]["text"], "the hit holds the answer")
            check("line" not in hit["item"] and "path" not in hit["item"], f"compact: {list(hit['item'])}")
            # 4. Page on: the events around it.
            result, around = await call(session, "history_list", {**hit["neighborhood"]["history_list"], "limit": 4})
            spent.append(size(result))
            check(around["items"], "the neighborhood lists events")
            sizes["structured"] = spent

    async with stdio_client(demo) as (read, write):
        async with ClientSession(read, write, client_info=PI) as session:
            await session.initialize()
            spent = []
            result, text = await call_text(session, "history_list", {"query": QUESTION})
            spent.append(size(result))
            steps = recipes(text)
            check("no matching events" in text and 'session: "*" has ' in text, f"text: {text}")
            tool, everywhere = steps["every session"]
            result, text = await call_text(session, tool, {**everywhere, "sessions": True, "limit": 3})
            spent.append(size(result))
            tool, read_hit = recipes(text)["read"]
            check(tool == "history_read" and read_hit["session"].startswith("claude:70fc6d83"), f"read: {read_hit}")
            result, text = await call_text(session, tool, read_hit)
            spent.append(size(result))
            check(QUESTION in text and "id.go:49" in text, "the read holds the answer")
            check(text.count("### Consensus Critical Issues") == 1, "the text once")
            tool, around = recipes(text)["neighborhood"]
            result, text = await call_text(session, tool, {**around, "limit": 4})
            spent.append(size(result))
            check(re.search(r"^(session \S+ \| )?seq \d+ \|", text, re.M), f"the neighborhood lists events: {text[:200]}")
            sizes["text"] = spent

    for form, spent in sizes.items():
        check(sum(spent) < EXCHANGE_BUDGET, f"{form}: the exchange took {sum(spent)} bytes ({spent})")
    print(json.dumps(sizes), file=sys.stderr)


# Over the real samples: a question a person asks weeks later, in plain words, with the session
# that answers it (fixtures/recall/questions.jsonl, q003).
SAMPLES_QUESTION = "posthog shutdown timeout"
SAMPLES_ANSWER = "claude:cde341db-b80a-44f5-b0f2-94db2ef7a164"


async def samples_exchange(args):
    """The same exchange over the real samples, from another session: the natural call finds
    nothing here and says what every session holds; the model asks in plain words, reads the
    best hit of the best session, and lists the events around it. Under 12 KiB, each text once."""
    env = {"CLAUDE_CODE_SESSION_ID": "70fc6d83-147d-4fdf-b015-bd67eeb11883"}
    samples = server(args, env, roots=args.samples_root)
    async with stdio_client(samples) as (read, write):
        async with ClientSession(read, write, client_info=CLAUDE) as session:
            await session.initialize()
            spent = []
            result, page = await call(session, "history_list", {"query": "posthog"})
            spent.append(size(result))
            check(page["items"] == [] and "every_session" in page, f"nothing here, and where: {page}")
            result, found = await call(session, "history_find", {"text": SAMPLES_QUESTION, "limit": 3})
            spent.append(size(result))
            best = found["sessions"][0]
            check(best["session"] == SAMPLES_ANSWER, f"the answer first: {[s['session'] for s in found['sessions']]}")
            result, hit = await call(session, "history_read", best["best"][0]["read"]["history_read"])
            spent.append(size(result))
            check("posthog" in hit["item"]["text"].lower(), "the hit holds the words")
            result, around = await call(session, "history_list", {**hit["neighborhood"]["history_list"], "limit": 4})
            spent.append(size(result))
            check(around["items"], "the neighborhood lists events")
            check(sum(spent) < EXCHANGE_BUDGET, f"samples: the exchange took {sum(spent)} bytes ({spent})")
            print(json.dumps({"samples": spent}), file=sys.stderr)


async def auto_negotiation(args):
    """The high-level client probes server/discover first and falls back to initialize."""
    async with Client(server(args)) as client:
        tools = await client.list_tools()
        check({t.name for t in tools.tools} == {"history_list", "history_find", "history_read"}, "tools via Client")
        result = await client.call_tool("history_list", {"session": "pi:*"})
        check(not result.is_error and "session pi:" in result.content[0].text, "a call via Client (text: a client not known to show structured content)")


async def main():
    args = parse_args()
    await main_session(args)
    await current_session(args)
    await auto_negotiation(args)
    await agents_eye(args)
    await samples_exchange(args)
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
            if not isinstance(e, AssertionError):
                traceback.print_exception(e, file=sys.stderr)
        sys.exit(1)
