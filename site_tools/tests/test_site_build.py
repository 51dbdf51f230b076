"""The site builds with its site command, opcourse/site/build_site.py (`mkdocs build --strict`: links, anchors and
snippets all resolve; then KaTeX), a chapter that names a code region that does not exist stops the build with a
message that names it, and so does a diagram too wide to read.

A page's GPU figures come from the run's summary.json: a citation of evidence that does not exist, a row or a measured
value the run did not log, a text file it did not write, a profiler column its table lacks, a figure on a page that
does not name the run's machine, a summary whose figure no longer matches its logs, and a reference row quoted from an
older run than the newest that logged it (two pages would show different figures) each stop the build, by name.
A fenced block the fence extension did not read as one (it would show as raw text) stops it too.

Every external reference is a listed source with the date it was checked and the torch version (opcourse/site/sources.py),
and a link to PyTorch's versioned documentation names the X.Y of the torch it was checked against, today the pinned
2.14.1 (docs.pytorch.org/docs/2.14/, not /stable/ nor another version).

usage: test_site_build.py build SITE_DIR | broken_snippet | wide_diagram | gpu_evidence | sources"""

import os
import sys
import tempfile

from sitelib import COURSE_ROOT, build_site, copy_course


def test_build(site_dir):
    status, output = build_site(COURSE_ROOT, site_dir)
    print(output)
    assert status == 0, f"the site build (mkdocs build --strict) failed (exit {status}); its output is above"
    # pages are NAME.html (use_directory_urls: false), and the search index is also a script (Material's offline
    # plugin): both so that the site works opened from disk (file://), which the browser test checks
    for page in (
        "index.html",
        "01_custom_op.html",
        "02_schema.html",
        "glossary/opcheck.html",
        "search/search_index.json",
        "search/search_index.js",
        "assets/katex/katex.min.js",
        "assets/katex/contrib/auto-render.min.js",
    ):
        assert os.path.isfile(os.path.join(site_dir, page)), f"the built site has no {page}"
    print(f"site/build: the strict build passed; site in {site_dir}")


def test_broken_snippet():
    with tempfile.TemporaryDirectory() as tmp:
        copy_course(tmp)
        chapter = os.path.join(tmp, "chapters", "01_custom_op.md")
        with open(chapter) as f:
            original = f.read()
        with open(chapter, "a") as f:
            f.write('\n```cpp\n--8<-- "exercises/01_custom_op/scale_add.cpp:no_such_region"\n```\n')
        status, output = build_site(tmp, os.path.join(tmp, "site"))
        print(output)
        assert status != 0, "a chapter naming a missing code region must fail the build, but it passed"
        assert "Snippet section 'no_such_region' could not be located" in output and "01_custom_op.md" in output, (
            "the build failed, but its message does not name the missing region and the chapter"
        )

        # and a missing file the same way
        with open(chapter, "w") as f:
            f.write(original + '\n```cpp\n--8<-- "exercises/01_custom_op/no_such_file.cpp"\n```\n')
        status, output = build_site(tmp, os.path.join(tmp, "site2"))
        assert status != 0 and "no_such_file.cpp" in output, output

        # and a fence the fence extension does not take (an escaped quote in its title): it would show as raw text
        with open(chapter, "w") as f:
            f.write(original + '\n```text title="run \\"this\\""\nprinted\n```\n')
        status, output = build_site(tmp, os.path.join(tmp, "site3"))
        assert status != 0 and "a fenced block was not read as one" in output and "01_custom_op.md" in output, output
    print(
        "site/broken_snippet: a missing region, a missing file and a fence not read as one each stop the strict "
        "build, by name"
    )


def test_wide_diagram():
    """Six boxes in a row: Graphviz makes it ~1100 pt wide, and the page would shrink its labels to ~8 px."""
    with tempfile.TemporaryDirectory() as tmp:
        copy_course(tmp)
        nodes = " -> ".join(f'n{i} [label="a step of the pipeline {i}"]'.split(" [")[0] for i in range(6))
        labels = "; ".join(f'n{i} [label="a step of the pipeline {i}"]' for i in range(6))
        with open(os.path.join(tmp, "chapters", "02_schema.md"), "a") as f:
            f.write(
                f"\n```dot\ndigraph too_wide {{\n  rankdir=LR; node [shape=box, fontsize=11];\n  {labels};\n"
                f"  {nodes};\n}}\n```\n"
            )
        status, output = build_site(tmp, os.path.join(tmp, "site"))
        print(output)
        assert status != 0, "a diagram too wide to read must fail the build, but it passed"
        assert "digraph too_wide" in output and "02_schema.md" in output and "pt wide" in output, (
            "the build failed, but its message does not name the diagram, the chapter and its width"
        )
    print("site/wide_diagram: a diagram wider than the limit stops the strict build, by name and width")


def test_gpu_evidence():
    run = "2026-12-03-all-solutions-2"
    page = os.path.join("chapters", "glossary", "custom-operator.md")
    figures_run, figures_page = "2026-12-05-chapter-figures-hang", os.path.join("chapters", "08_profiling.md")
    breakages = [  # (what is planted, what the build's message must say)
        (
            "a citation of a log that does not exist",
            lambda tmp: _append(tmp, page, "\nSee `evidence/gpu/2026-01-01-no-such-run/main.log`.\n"),
            "cites evidence/gpu/2026-01-01-no-such-run/main.log, which does not exist",
        ),
        (
            "a row the run did not log",
            lambda tmp: _append(tmp, page, f"\n<!-- gpu-row: {run} 04_cuda no_such.row -->\n"),
            "has no row no_such.row of 04_cuda",
        ),
        (
            "a figure retyped into the summary",
            lambda tmp: _edit_json(
                os.path.join(tmp, "evidence", "gpu", run, "summary.json"),
                lambda d: d["references"]["06_autograd"]["gradcheck.float64"].update(status="FAIL"),
            ),
            "summary.json differs from the logs beside it",
        ),
        # chapters 8 and 9: measured values and text files of the chapter-figures step
        (
            "a measured value the run did not write",
            lambda tmp: _append(tmp, figures_page, f"\n<!-- gpu-figure: {figures_run} profile.no_such_us .1f -->\n"),
            "figures.json has no profile.no_such_us",
        ),
        (
            "a measured value retyped into the summary",
            lambda tmp: _edit_json(
                os.path.join(tmp, "evidence", "gpu", figures_run, "summary.json"),
                lambda d: d["figures"]["profile"].update(mm16_calls=6),
            ),
            "summary.json differs from the logs beside it",
        ),
        (
            "a text file the run did not write",
            lambda tmp: _append(tmp, figures_page, f"\n```gpu-text {figures_run} chapter-figures/no_such.txt\n```\n"),
            "has no file chapter-figures/no_such.txt",
        ),
        (
            "a profiler column the table does not have",
            lambda tmp: _append(
                tmp,
                figures_page,
                f"\n```gpu-text {figures_run} chapter-figures/profile_table.txt\ncolumns: Name | Self GPU\n```\n",
            ),
            "the table has no column Self GPU",
        ),
        (
            "words quoted from a log that the run did not write",
            lambda tmp: _append(
                tmp,
                os.path.join("chapters", "04_cuda.md"),
                '\n<!-- gpu-quote: 2026-12-05-cuda-cases probes.log "during capture returned 0" -->\n',
            ),
            "probes.log does not contain 'during capture returned 0'",
        ),
        # the glossary once showed "4 invalid calls raised" from this run while the chapters showed 6: a row is
        # quoted from the newest run that logged it (`newest`), never from an older one
        (
            "a reference row quoted from an older run than the newest that logged it",
            lambda tmp: _append(tmp, page, f"\n<!-- gpu-row: {run} 04_cuda contract.cpu -->\n"),
            f"row contract.cpu of 04_cuda is quoted from {run}, but the newer run "
            "evidence/gpu/2026-12-05-chapter-figures-hang logged it too",
        ),
        (
            "a measured value on a page that does not name the run's machine",
            lambda tmp: _append(tmp, page, f"\n<!-- gpu-figure: {figures_run} profile.mm16_calls -->\n"),
            f"needs a <!-- gpu-run: {figures_run} --> mark",
        ),
    ]
    _each_stops_the_build("gpu_evidence", breakages)


def test_sources():
    """External references: a bullet without its checked note, or a prose link the page does not list, stops the
    build by name; a torch pinned newer than the pages' sources were checked against warns without stopping it, and
    opcourse/site/sources_due.py lists those pages."""
    import subprocess

    page = os.path.join("chapters", "01_custom_op.md")
    breakages = [
        (
            "a source without the date it was checked",
            lambda tmp: _append(tmp, page, "\n## Read more\n\n- [A page](https://example.org/a-page): what it says.\n"),
            "the source https://example.org/a-page does not say when it was checked",
        ),
        (
            "a link in the prose that is not among the page's sources",
            lambda tmp: _append(tmp, page, "\nSee [another page](https://example.org/another) for more.\n"),
            "https://example.org/another is not among the page's sources",
        ),
        # PyTorch's documentation is versioned: a page checked against the pinned torch links that version's pages
        (
            "a PyTorch documentation link to another version than the pinned torch's",
            lambda tmp: _append(
                tmp,
                page,
                "\n## Read more\n\n- [torch.library, 2.13](https://docs.pytorch.org/docs/2.13/"
                "library.html): older. (checked 2026-12-05 against torch 2.14.1)\n",
            ),
            "https://docs.pytorch.org/docs/2.13/library.html links PyTorch's documentation of '2.13', not of torch "
            "2.14.1 it was checked against",
        ),
        (
            "a PyTorch documentation link to /docs/stable/ (it moves on without the page)",
            lambda tmp: _append(
                tmp,
                page,
                "\n## Read more\n\n- [torch.library](https://docs.pytorch.org/docs/stable/"
                "library.html): stable. (checked 2026-12-05 against torch 2.14.1)\n",
            ),
            "write https://docs.pytorch.org/docs/2.14/library.html",
        ),
    ]
    _each_stops_the_build("sources", breakages, naming="01_custom_op.md")
    with tempfile.TemporaryDirectory() as tmp:
        copy_course(tmp)
        _replace(tmp, os.path.join("requirements", "course.txt"), "\ntorch==", "\ntorch==2.99.0\n# was: torch==")
        status, output = build_site(tmp, os.path.join(tmp, "site"))
        warning = "the course pins 2.99.0: re-check them"
        assert status == 0, f"a newer pinned torch must warn, not stop the build (exit {status}):\n{output[-3000:]}"
        assert warning in output and "chapters/01_custom_op.md" in output, (
            f"the build does not warn that the pages' sources predate the pinned torch:\n{output[-3000:]}"
        )
        due = subprocess.run(
            [sys.executable, "-m", "opcourse.site.sources_due"], cwd=tmp, capture_output=True, text=True, timeout=120
        )
        assert (
            due.returncode == 0
            and "chapters/08_profiling.md: due (checked against torch" in due.stdout
            and "the course pins 2.99.0" in due.stdout
        ), f"sources_due.py does not list the pages due:\n{due.stdout}"
        print(
            "site/sources: a newer pinned torch warns (the build passes) and sources_due.py lists the pages: "
            + due.stdout.strip().splitlines()[-1]
        )
        due = subprocess.run(
            [sys.executable, "-m", "opcourse.site.sources_due"],
            cwd=COURSE_ROOT,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert due.returncode == 0 and due.stdout.startswith("0 of"), (
            f"today no page should be due (the pinned torch is the one the sources were checked against):\n{due.stdout}"
        )


def _each_stops_the_build(test, breakages, naming=""):
    """Each (what is planted, how, what the build's message must say), planted in its own copy of the course."""
    for what, plant, message in breakages:
        with tempfile.TemporaryDirectory() as tmp:
            copy_course(tmp)
            plant(tmp)
            status, output = build_site(tmp, os.path.join(tmp, "site"))
            assert status != 0 and message in output and naming in output, (
                f"{what}: the build must fail{' naming ' + naming if naming else ''} saying {message!r}:\n{output[-3000:]}"
            )
            print(f"site/{test}: {what} stops the build ({message})")


def _replace(root, rel, old, new):
    path = os.path.join(root, rel)
    with open(path) as f:
        text = f.read()
    assert old in text, f"{rel} no longer holds {old!r}: the planted breakage must follow it"
    with open(path, "w") as f:
        f.write(text.replace(old, new, 1))


def _append(root, rel, text):
    with open(os.path.join(root, rel), "a") as f:
        f.write(text)


def _edit_json(path, change):
    import json

    with open(path) as f:
        data = json.load(f)
    change(data)
    with open(path, "w") as f:
        json.dump(data, f, indent=2)


if __name__ == "__main__":
    {
        "build": lambda: test_build(os.path.abspath(sys.argv[2])),
        "broken_snippet": test_broken_snippet,
        "wide_diagram": test_wide_diagram,
        "gpu_evidence": test_gpu_evidence,
        "sources": test_sources,
    }[sys.argv[1]]()
