#!/usr/bin/env python3
"""Keeps the documentation's links honest.

Scans README.md, python/README.md, docs/*.md and data/**/README.md for relative markdown links, `[text](path)`,
`[text](path#anchor)`, `[text](#anchor)` and reference definitions `[label]: path`, and fails
when a link's file does not exist (resolved relative to the file that holds the link) or when an
anchor into a .md file matches none of its headings' GitHub-style anchors (lowercase, spaces
become '-', punctuation other than '-' and '_' dropped, duplicates numbered -1, -2, ...).
Links with a scheme (http:, https:, mailto:, ...) are not checked; neither are links inside
fenced code blocks or inline code. It also fails when README.md exceeds README_MAX_LINES lines.

Usage: check_links.py [REPO_ROOT]   (default: the repository that holds this script)
Exit code: 0 when every link resolves, 1 otherwise (each problem printed as file:line: ...),
2 on usage errors. Python standard library only.
"""

import os
import re
import sys
import urllib.parse

README_MAX_LINES = 350

# [text](target) or ![alt](target); the text may hold one level of brackets.
INLINE_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*(<[^>]*>|[^)\s]*)(?:\s+\"[^\"]*\")?\s*\)")
# [label]: target
REFERENCE_DEFINITION = re.compile(r"^ {0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)")
FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
HTML_ANCHOR = re.compile(r"<a\s+[^>]*(?:name|id)\s*=\s*\"([^\"]+)\"", re.IGNORECASE)
SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
INLINE_CODE = re.compile(r"(`+)(.+?)\1")


def markdown_files(root):
    files = [os.path.join(root, "README.md"), os.path.join(root, "python", "README.md")]
    docs = os.path.join(root, "docs")
    if os.path.isdir(docs):
        files += sorted(os.path.join(docs, name) for name in os.listdir(docs) if name.endswith(".md"))
    # The READMEs of the data folders (provenance), which link into docs/.
    for top, _, names in sorted(os.walk(os.path.join(root, "data"))):
        files += [os.path.join(top, name) for name in sorted(names) if name == "README.md"]
    return [f for f in files if os.path.isfile(f)]


def prose_lines(text):
    """Yields (line number, line) outside fenced code blocks."""
    fence = None
    for number, line in enumerate(text.splitlines(), start=1):
        match = FENCE.match(line)
        if fence is None:
            if match:
                fence = match.group(1)
                continue
            yield number, line
        elif match and match.group(1)[0] == fence[0] and len(match.group(1)) >= len(fence):
            fence = None


def slug(heading):
    """GitHub's anchor of a heading's text."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link keeps its text
    text = re.sub(r"<[^>]+>", "", text)  # inline HTML tags
    text = text.strip().lower()
    kept = "".join(ch for ch in text if ch.isalnum() or ch in "-_ ")
    return kept.replace(" ", "-")


_anchor_cache = {}


def anchors_of(path):
    if path not in _anchor_cache:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        anchors, seen = set(), {}
        for _, line in prose_lines(text):
            heading = HEADING.match(line)
            if heading:
                base = slug(heading.group(2))
                count = seen.get(base, 0)
                seen[base] = count + 1
                anchors.add(base if count == 0 else "%s-%d" % (base, count))
            anchors.update(HTML_ANCHOR.findall(line))
        _anchor_cache[path] = anchors
    return _anchor_cache[path]


def links_of(text):
    """Yields (line number, target) of every link outside code."""
    for number, line in prose_lines(text):
        definition = REFERENCE_DEFINITION.match(line)
        if definition:
            yield number, definition.group(1)
            continue
        line = INLINE_CODE.sub("", line)
        for match in INLINE_LINK.finditer(line):
            yield number, match.group(1)


def check_file(root, path):
    problems, count = [], 0
    with open(path, encoding="utf-8") as f:
        text = f.read()
    shown = os.path.relpath(path, root)
    for number, target in links_of(text):
        target = target.strip("<>").strip()
        if not target or SCHEME.match(target):
            continue
        count += 1
        file_part, _, anchor = target.partition("#")
        file_part = urllib.parse.unquote(file_part)
        if file_part:
            resolved = os.path.normpath(os.path.join(os.path.dirname(path), file_part))
        else:
            resolved = path
        if not os.path.exists(resolved):
            problems.append("%s:%d: link target '%s' does not exist (looked for %s)"
                            % (shown, number, target, os.path.relpath(resolved, root)))
            continue
        if anchor and resolved.endswith(".md") and os.path.isfile(resolved):
            if urllib.parse.unquote(anchor).lower() not in anchors_of(resolved):
                problems.append("%s:%d: link target '%s': no heading of %s has the anchor '#%s'"
                                % (shown, number, target, os.path.relpath(resolved, root), anchor))
    return problems, count


def main(argv):
    if len(argv) > 2:
        print("usage: check_links.py [REPO_ROOT]", file=sys.stderr)
        return 2
    root = os.path.abspath(argv[1] if len(argv) == 2 else
                           os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
    readme = os.path.join(root, "README.md")
    if not os.path.isfile(readme):
        print("check_links.py: no README.md in %s" % root, file=sys.stderr)
        return 2
    problems, links = [], 0
    files = markdown_files(root)
    for path in files:
        found, count = check_file(root, path)
        problems += found
        links += count
    broken = len(problems)
    with open(readme, encoding="utf-8") as f:
        readme_lines = len(f.read().splitlines())
    if readme_lines > README_MAX_LINES:
        problems.append("README.md: %d lines, more than the %d a newcomer reads in five minutes; "
                        "move detail into docs/" % (readme_lines, README_MAX_LINES))
    for problem in problems:
        print(problem)
    print("check_links.py: %d relative links in %d files, %d broken; README.md %d lines (limit %d)"
          % (links, len(files), broken, readme_lines, README_MAX_LINES))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
