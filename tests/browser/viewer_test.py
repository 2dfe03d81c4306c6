#!/usr/bin/env python3
"""Browser test of the timeline viewer (`rseqmc check --html`).

Makes the counterexample of the planted bug buggy/cpu_not_rechecked with
`rseqmc check --html --json`, loads the page in headless Chromium (Selenium +
chromedriver) from file:// with the network disabled, and checks it against
the trace of the same check's JSON:
  * one lane per CPU and per thread;
  * one event marker per injected event, with its kind, at its trace entry;
  * one abort arrow per rseq abort;
  * critical sections shaded exactly at the steps inside a section;
  * the step slider: at several positions the displayed symbol values, each
    thread's CPU and each CPU's running thread equal the state computed here
    (independently of the page's script) from the trace; the final position
    shows the values that broke the property.
A screenshot goes to ARTIFACT_DIR/timeline.png.

usage: viewer_test.py RSEQMC_BINARY ARTIFACT_DIR
Exit 77 (CTest skip) with the reason when Selenium, Chromium or chromedriver
is missing (tools/install-deps.sh --browser installs them).
"""
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile

SKIP = 77


def skip(why):
    print("SKIP: " + why + " (install with: tools/install-deps.sh --browser)", file=sys.stderr)
    sys.exit(SKIP)


def fail(why):
    print("FAIL: " + why, file=sys.stderr)
    sys.exit(1)


def expected_state(trace, doc, k):
    """Symbols, thread CPUs and running threads after the first k entries."""
    mem = {}
    by_address = {}
    for lay in doc["layout"]:
        cpus = doc["cpus"] if lay["per_cpu"] else 1
        for c in range(cpus):
            for i in range(lay["count"]):
                key = lay["name"] + ("[%d]" % c if lay["per_cpu"] else "") + ("[%d]" % i if lay["count"] > 1 else "")
                v = doc["initial"][lay["name"]]
                v = (v if lay["count"] == 1 else v[i]) if not lay["per_cpu"] else (v[c] if lay["count"] == 1 else v[c][i])
                mem[key] = v
                by_address[lay["address"] + lay["stride"] * c + i * lay["width"]] = key
    cpu_of = [t["start_cpu"] for t in doc["threads"]]
    running = [-1] * doc["cpus"]
    for e in trace[:k]:
        t = e["thread"]
        if e["kind"] == "step":
            if t >= 0:
                cpu_of[t] = e["cpu"]
                running[e["cpu"]] = t
            if e["a"] in by_address:
                mem[by_address[e["a"]]] = e["b"]
        elif e["kind"] == "switch_in":
            running[e["cpu"]] = t
            if t >= 0:
                cpu_of[t] = e["cpu"]
        elif e["kind"] == "migrate":
            cpu_of[t] = e["a"]
            if running[e["cpu"]] == t:
                running[e["cpu"]] = -1
        elif e["kind"] in ("preempt", "yield"):
            running[e["cpu"]] = e["a"]
        elif e["kind"] == "exit":
            if running[e["cpu"]] == t:
                running[e["cpu"]] = -1
    return mem, cpu_of, running


def main():
    if len(sys.argv) != 3:
        fail("usage: viewer_test.py RSEQMC_BINARY ARTIFACT_DIR")
    rseqmc, artifacts = sys.argv[1], sys.argv[2]
    if not os.access(rseqmc, os.X_OK):
        fail("no rseqmc binary at " + rseqmc)
    try:
        from selenium import webdriver
        from selenium.webdriver.common.by import By
    except ImportError:
        skip("python3-selenium is not installed")
    chrome = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    driver_bin = shutil.which("chromedriver")
    if chrome is None or driver_bin is None:
        skip("chromium or chromedriver is not installed")

    try:
        socket.getaddrinfo("localhost", None)
    except OSError:  # Selenium and chromedriver reach each other and Chromium at "localhost"
        print("SKIP: 'localhost' does not resolve here (no /etc/hosts?): chromedriver cannot reach Chromium",
              file=sys.stderr)
        sys.exit(SKIP)

    opts = webdriver.ChromeOptions()
    opts.binary_location = chrome
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1400,1000",
              "--proxy-server=127.0.0.1:9", "--proxy-bypass-list=<-loopback>"):
        opts.add_argument(a)
    try:
        from selenium.webdriver.chrome.service import Service
        driver = webdriver.Chrome(service=Service(driver_bin), options=opts)
    except Exception as e:  # a browser that cannot start here is an environment problem
        skip("headless Chromium could not start: %s" % str(e).splitlines()[0])
    work = tempfile.mkdtemp(prefix="rseqmc-viewer-")
    try:
        # The planted bug of the README's screenshot (a lost increment, no
        # abort), and one whose counterexample aborts a critical section.
        for name, screenshot in (("buggy/cpu_not_rechecked", True), ("buggy/store_before_commit", False)):
            page, doc = make_page(rseqmc, work, name)
            check_page(driver, By, page, doc, artifacts if screenshot else None)
            print("%s: passed (%d trace entries)" % (name, len(doc["trace"])))
    finally:
        driver.quit()
        shutil.rmtree(work, ignore_errors=True)


def make_page(rseqmc, work, name):
    """`rseqmc check NAME --json --html`: the page and its execution's JSON."""
    page = os.path.join(work, name.replace("/", "_") + ".html")
    run = subprocess.run([rseqmc, "check", name, "--kernel", "6.18", "--json", "--html", page],
                         capture_output=True, text=True, timeout=120)
    if run.returncode != 0:
        fail("rseqmc check %s exited %d: %s" % (name, run.returncode, run.stderr))
    doc = json.loads(run.stdout)["counterexample"]["trace"]
    with open(page, encoding="utf-8") as f:
        html = f.read().replace('"http://www.w3.org/2000/svg"', "")
    for banned in ("http://", "https://", "<link", "src="):
        if banned in html:
            fail("the page refers to something outside itself: " + banned)
    return page, doc


def check_page(driver, By, page, doc, artifacts):
    trace = doc["trace"]
    driver.get("file://" + page)
    errors = [l for l in driver.get_log("browser") if l["level"] == "SEVERE"]
    if errors:
        fail("the page's script failed: %s" % errors)
    # Lanes.
    lanes = [e.get_attribute("data-lane") for e in driver.find_elements(By.CSS_SELECTOR, "g.lane")]
    want = ["cpu%d" % c for c in range(doc["cpus"])] + ["thread%d" % t for t in range(len(doc["threads"]))]
    if lanes != want:
        fail("lanes %s, expected %s" % (lanes, want))
    # Event markers: one per injected event, at its entry, with its kind.
    markers = sorted((int(e.get_attribute("data-entry")), e.get_attribute("data-kind"))
                     for e in driver.find_elements(By.CSS_SELECTOR, "g.event-marker"))
    events = [(i, e["kind"]) for i, e in enumerate(trace) if e["kind"] in ("preempt", "migrate", "signal", "ipi")]
    if markers != events or not events:
        fail("event markers %s, expected %s" % (markers, events))
    injected = sum(doc["events"].values())
    if len(markers) != injected:
        fail("%d markers for %d injected events" % (len(markers), injected))
    aborts = [i for i, e in enumerate(trace) if e["kind"] == "abort"]
    jumps = sorted(int(e.get_attribute("data-entry")) for e in driver.find_elements(By.CSS_SELECTOR, "path.abort-jump"))
    if jumps != aborts:
        fail("abort arrows at %s, expected %s" % (jumps, aborts))
    if artifacts is None and not aborts:
        fail("this counterexample was chosen for its abort, but has none")
    # Critical sections shaded exactly where a step's pc is inside one.
    inside = [i for i, e in enumerate(trace) if e["kind"] == "step" and
              any(s["start"] <= e["pc"] < s["post_commit"] for s in doc["sections"])]
    shaded = sorted(int(e.find_element(By.XPATH, "..").get_attribute("data-entry"))
                    for e in driver.find_elements(By.CSS_SELECTOR, "rect.cs-shade"))
    if shaded != inside or not inside:
        fail("shaded steps %s, expected %s" % (shaded, inside))
    # The slider: the displayed state equals the trace's at each position.
    slider = driver.find_element(By.ID, "step-slider")
    if int(slider.get_attribute("max")) != len(trace):
        fail("slider max %s, expected %d" % (slider.get_attribute("max"), len(trace)))
    positions = sorted({0, 1, len(trace) // 3, len(trace) // 2, len(trace) - 1, len(trace)} |
                       {i + 1 for i, e in enumerate(trace) if e["kind"] == "step" and e["a"] != 0})
    for k in positions:
        driver.execute_script("const s = arguments[0]; s.value = arguments[1];"
                              "s.dispatchEvent(new Event('input'));", slider, k)
        mem, cpu_of, running = expected_state(trace, doc, k)
        shown = {e.get_attribute("data-key"): e.text for e in driver.find_elements(By.CSS_SELECTOR, "td.mem")}
        if shown != {key: str(v) for key, v in mem.items()}:
            fail("at slider %d the page shows %s, the trace says %s" % (k, shown, mem))
        for row in driver.find_elements(By.CSS_SELECTOR, "tr.thread-state"):
            t = int(row.get_attribute("data-thread"))
            if row.find_element(By.CSS_SELECTOR, ".cpu").text != "cpu%d" % cpu_of[t]:
                fail("at slider %d thread %d shown on %s, the trace says cpu%d" %
                     (k, t, row.find_element(By.CSS_SELECTOR, ".cpu").text, cpu_of[t]))
        for row in driver.find_elements(By.CSS_SELECTOR, "tr.cpu-state"):
            c = int(row.get_attribute("data-cpu"))
            name = doc["threads"][running[c]]["name"] if running[c] >= 0 else "idle"
            if row.find_element(By.CSS_SELECTOR, ".running").text != name:
                fail("at slider %d cpu%d shows %s running, the trace says %s" %
                     (k, c, row.find_element(By.CSS_SELECTOR, ".running").text, name))
    # The final state shows the broken properties, and the trace's stores
    # over the initial values give the final symbols the JSON reports.
    broken = driver.find_element(By.ID, "broken-text").text
    for p in doc["properties"]:
        if not p["holds"] and "broken: property " + p["text"] not in broken:
            fail("the broken-values panel lacks %r: %r" % (p["text"], broken))
    if not any(not p["holds"] for p in doc["properties"]) and doc["message"] not in broken:
        fail("the broken-values panel lacks the message %r: %r" % (doc["message"], broken))
    final = expected_state(trace, doc, len(trace))[0]
    initial_doc = dict(doc, initial=doc["symbols"])
    reported = expected_state([], initial_doc, 0)[0]
    if final != reported:
        fail("the trace's stores do not give the final symbols: %s vs %s" % (final, reported))
    if artifacts is None:
        return
    # Screenshot of the counterexample at a step inside the race.
    store_steps = [i + 1 for i, e in enumerate(trace) if e["kind"] == "step" and e["a"] in
                   {l["address"] for l in doc["layout"]}]
    k = store_steps[0] if store_steps else len(trace)
    driver.execute_script("const s = arguments[0]; s.value = arguments[1]; s.dispatchEvent(new Event('input'));",
                          slider, k)
    os.makedirs(artifacts, exist_ok=True)
    height = driver.execute_script("return document.body.scrollHeight")
    driver.set_window_size(1400, min(height + 160, 2400))  # + the window's own chrome
    shot = os.path.join(artifacts, "timeline.png")
    if not driver.save_screenshot(shot):
        fail("no screenshot written")
    print("screenshot: " + shot)


if __name__ == "__main__":
    main()
