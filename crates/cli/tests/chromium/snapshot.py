"""Takes a heap snapshot of a page in headless Chromium through the DevTools protocol, as
DevTools' Memory panel does (HeapProfiler.takeHeapSnapshot, after a collection), talking to
the browser over --remote-debugging-pipe so that nothing but Python's standard library and
Debian's chromium is needed.

    python3 snapshot.py URL OUT.heapsnapshot

prints {"title": the page's title once loaded, "bytes": the snapshot's size}.
"""
import fcntl
import json
import os
import subprocess
import sys
import tempfile
import time

url, out = sys.argv[1], sys.argv[2]
def on_fds_3_and_4(a, b):
    """In the child: a on fd 3 and b on fd 4, wherever they were (moved up first, so that
    neither is overwritten by the other)."""
    a, b = fcntl.fcntl(a, fcntl.F_DUPFD, 10), fcntl.fcntl(b, fcntl.F_DUPFD, 10)
    os.dup2(a, 3)
    os.dup2(b, 4)


to_browser_r, to_browser_w = os.pipe()
from_browser_r, from_browser_w = os.pipe()
profile = tempfile.mkdtemp(prefix="leakscope-chromium-")
# The browser reads commands on fd 3 and writes answers on fd 4, each a JSON text ending in \0.
proc = subprocess.Popen(
    [
        "chromium", "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
        "--disable-dev-shm-usage", "--remote-debugging-pipe", "--user-data-dir=" + profile, "about:blank",
    ],
    close_fds=False,  # os.pipe's ends close on exec; the two dup2'd below stay open
    preexec_fn=lambda: on_fds_3_and_4(to_browser_r, from_browser_w),
    stdout=subprocess.DEVNULL,
    stderr=None if os.environ.get("SNAPSHOT_DEBUG") else subprocess.DEVNULL,
)
os.close(to_browser_r)
os.close(from_browser_w)
reader = os.fdopen(from_browser_r, "rb")
writer = os.fdopen(to_browser_w, "wb")
buffered = b""
next_id = 0


def read_message():
    global buffered
    while b"\0" not in buffered:
        chunk = os.read(reader.fileno(), 1 << 20)
        if not chunk:
            raise SystemExit("chromium closed the pipe (exit %s)" % proc.poll())
        buffered += chunk
    message, buffered = buffered.split(b"\0", 1)
    return json.loads(message)


def send(method, params=None, session=None, on_event=None):
    """Sends a command and returns its result, passing the events met meanwhile to on_event."""
    global next_id
    next_id += 1
    message = {"id": next_id, "method": method, "params": params or {}}
    if session:
        message["sessionId"] = session
    writer.write(json.dumps(message).encode() + b"\0")
    writer.flush()
    while True:
        m = read_message()
        if m.get("id") == next_id:
            if "error" in m:
                raise SystemExit("%s: %s" % (method, m["error"]))
            return m["result"]
        if on_event and "method" in m:
            on_event(m)


try:
    target = send("Target.createTarget", {"url": "about:blank"})["targetId"]
    session = send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
    send("Page.enable", session=session)
    send("Page.navigate", {"url": url}, session=session)
    deadline = time.time() + 60
    title = ""
    while time.time() < deadline:
        title = send("Runtime.evaluate", {"expression": "document.readyState + ' ' + document.title"}, session=session)
        title = title["result"].get("value", "")
        if title.startswith("complete"):
            break
        time.sleep(0.1)
    send("HeapProfiler.enable", session=session)
    send("HeapProfiler.collectGarbage", session=session)
    with open(out, "w", encoding="utf-8") as f:
        def chunk(m):
            if m["method"] == "HeapProfiler.addHeapSnapshotChunk":
                f.write(m["params"]["chunk"])
        send("HeapProfiler.takeHeapSnapshot", {"reportProgress": False}, session=session, on_event=chunk)
    print(json.dumps({"title": title.split(" ", 1)[-1], "bytes": os.path.getsize(out)}))
finally:
    try:
        send("Browser.close")
    except BaseException:
        pass
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
