//! The house rules, checked by the suite so that CI keeps them: file and function sizes, the
//! documents' budgets, cited paths that exist, proptest seeds where proptest looks for them,
//! a sans-IO core, and processes that do not reach into each other.
//!
//! Each check reads the working tree as text (no parser): it is a guard against drift, and
//! its message says what to do. The limits are the developers' guide's.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

/// Lines a non-test source file may have; split it by responsibility before it grows past.
const MAX_FILE_LINES: usize = 800;
/// Lines a function may have, unless a `// Long: <why>` comment right above it says why.
const MAX_FN_LINES: usize = 100;
/// The documents' budgets (lines), by reader: users, status, current figures.
const DOC_BUDGETS: [(&str, usize); 3] = [
    ("README.md", 350),
    ("NOTES.md", 250),
    ("BENCHMARKS.md", 700),
];

/// The folders of the binary crate that are processes of their own: none may import another.
/// `http` is the AM's HTTP face, so it counts as the AM's.
const PROCESSES: [(&str, &str); 6] = [
    ("am", "am"),
    ("http", "am"),
    ("executor", "executor"),
    ("submit", "submit"),
    ("tools", "tools"),
    ("split", "split"),
];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// This file quotes what it looks for in its own tests and messages.
fn is_this_file(p: &Path) -> bool {
    p.ends_with(file!()) || p.file_name().is_some_and(|n| n == "rules.rs")
}

fn rel(p: &Path) -> String {
    p.strip_prefix(root()).unwrap_or(p).display().to_string()
}

/// Every file below `dir` (skipping build output and hidden folders).
fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        let name = e.file_name().to_string_lossy().to_string();
        if name.starts_with('.') || name == "target" || name == "node_modules" {
            continue;
        }
        if p.is_dir() {
            walk(&p, out);
        } else {
            out.push(p);
        }
    }
}

fn files_with_ext(dirs: &[&str], ext: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for d in dirs {
        walk(&root().join(d), &mut out);
    }
    out.retain(|p| p.extension().is_some_and(|e| e == ext));
    out.sort();
    out
}

/// The Rust source of the workspace's crates, benches and examples.
fn rust_sources() -> Vec<PathBuf> {
    files_with_ext(
        &[
            "src",
            "crates",
            "yarn-client",
            "benches",
            "examples",
            "tests",
        ],
        "rs",
    )
}

/// Tests and test data are exempt from the size rules: a test reads best whole.
fn is_test_file(p: &Path) -> bool {
    let r = rel(p);
    let name = p.file_name().unwrap().to_string_lossy();
    r.starts_with("tests/")
        || r.contains("/tests/")
        || r.contains("/testdata/")
        || name == "tests.rs"
        || name.ends_with("_tests.rs")
}

#[test]
fn no_source_file_is_over_the_line_limit() {
    let mut over = Vec::new();
    let mut sources = rust_sources();
    sources.extend(files_with_ext(&["python/src", "scripts"], "py"));
    for p in sources.iter().filter(|p| !is_test_file(p)) {
        let n = fs::read_to_string(p).unwrap().lines().count();
        if n > MAX_FILE_LINES {
            over.push(format!("{} ({n} lines)", rel(p)));
        }
    }
    assert!(
        over.is_empty(),
        "non-test files over {MAX_FILE_LINES} lines; split each by responsibility (a module per \
         part) before adding to it:\n  {}",
        over.join("\n  ")
    );
}

/// Where a `fn` item starts: `fn`, after visibility and qualifiers, at the start of a line.
fn is_fn_start(line: &str) -> bool {
    let mut t = line.trim_start();
    for prefix in [
        "pub(crate) ",
        "pub(super) ",
        "pub ",
        "const ",
        "async ",
        "unsafe ",
        "extern \"C\" ",
    ] {
        if let Some(rest) = t.strip_prefix(prefix) {
            t = rest;
        }
    }
    for prefix in ["const ", "async ", "unsafe "] {
        if let Some(rest) = t.strip_prefix(prefix) {
            t = rest;
        }
    }
    t.starts_with("fn ")
}

/// Braces that count: those outside comments, strings and char literals (good enough for
/// rustfmt'd code: raw strings and lifetimes are handled, nested block comments are not).
fn brace_delta(line: &str, in_raw: &mut Option<usize>) -> i64 {
    let b = line.as_bytes();
    let mut d = 0;
    let mut i = 0;
    while i < b.len() {
        if let Some(hashes) = *in_raw {
            if b[i] == b'"'
                && b[i + 1..]
                    .iter()
                    .take(hashes)
                    .filter(|&&c| c == b'#')
                    .count()
                    == hashes
            {
                *in_raw = None;
                i += 1 + hashes;
                continue;
            }
            i += 1;
            continue;
        }
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => break,
            b'r' if (b.get(i + 1) == Some(&b'"') || b.get(i + 1) == Some(&b'#'))
                && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_')) =>
            {
                let hashes = b[i + 1..].iter().take_while(|&&c| c == b'#').count();
                if b.get(i + 1 + hashes) == Some(&b'"') {
                    *in_raw = Some(hashes);
                    i += 2 + hashes;
                    continue;
                }
                i += 1;
            }
            b'"' => {
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    if b[i] == b'\\' {
                        i += 1;
                    }
                    i += 1;
                }
                i += 1;
            }
            b'\'' => {
                // A char literal ('x', '\n', '{') or a lifetime ('a): skip a literal only.
                if b.get(i + 2) == Some(&b'\'') {
                    i += 3;
                } else if b.get(i + 1) == Some(&b'\\') {
                    i += 2;
                    while i < b.len() && b[i] != b'\'' {
                        i += 1;
                    }
                    i += 1;
                } else {
                    i += 1;
                }
            }
            b'{' => {
                d += 1;
                i += 1;
            }
            b'}' => {
                d -= 1;
                i += 1;
            }
            _ => i += 1,
        }
    }
    d
}

/// `(first line, length, name)` of every function in `text` longer than `max` lines that has
/// no `// Long:` comment among the comments and attributes right above it.
fn long_functions(text: &str, max: usize) -> Vec<(usize, usize, String)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut found = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        if !is_fn_start(line) {
            continue;
        }
        // The body: from the first `{` after the signature to the brace that closes it.
        let mut depth = 0i64;
        let mut opened = false;
        let mut raw = None;
        let mut end = None;
        for (j, l) in lines.iter().enumerate().skip(i) {
            let before = depth;
            depth += brace_delta(l, &mut raw);
            if !opened && (depth > 0 || before > 0) {
                opened = true;
            }
            if !opened && l.trim_end().ends_with(';') {
                break; // a declaration without a body (trait method)
            }
            if opened && depth <= 0 {
                end = Some(j);
                break;
            }
        }
        let Some(end) = end else { continue };
        let len = end - i + 1;
        if len <= max {
            continue;
        }
        let explained = lines[..i]
            .iter()
            .rev()
            .take_while(|l| {
                let t = l.trim_start();
                t.starts_with("//") || t.starts_with("#[")
            })
            .any(|l| l.trim_start().starts_with("// Long:"));
        if !explained {
            let sig = line.trim();
            let name = sig[sig.find("fn ").unwrap_or(0)..]
                .split(['(', '<'])
                .next()
                .unwrap_or(sig)
                .to_string();
            found.push((i + 1, len, name));
        }
    }
    found
}

#[test]
fn no_function_is_over_the_line_limit_without_saying_why() {
    let mut over = Vec::new();
    for p in rust_sources().iter().filter(|p| !is_test_file(p)) {
        let text = fs::read_to_string(p).unwrap();
        // A file's `#[cfg(test)] mod tests { ... }` at its end is test code.
        let text = match text.find("#[cfg(test)]\nmod tests {") {
            Some(i) => &text[..i],
            None => &text,
        };
        for (line, len, name) in long_functions(text, MAX_FN_LINES) {
            over.push(format!("{}:{line} `{name}` ({len} lines)", rel(p)));
        }
    }
    assert!(
        over.is_empty(),
        "functions over {MAX_FN_LINES} lines: split each into named steps, or put a \
         `// Long: <why>` comment right above it:\n  {}",
        over.join("\n  ")
    );
}

#[test]
fn the_long_function_check_sees_bodies_and_the_marker() {
    let body = |n: usize| "    let x = '{';\n".repeat(n);
    let long = format!("fn a() {{\n{}}}\n", body(120));
    assert_eq!(long_functions(&long, 100).len(), 1);
    let short = format!("pub(crate) async fn b(x: u8) -> u8 {{\n{}}}\n", body(50));
    assert!(long_functions(&short, 100).is_empty());
    let marked = format!("// Long: one match over every message kind.\n#[inline]\n{long}");
    assert!(long_functions(&marked, 100).is_empty());
    let decl = "fn c(&self) -> u8;\nfn d() {\n}\n";
    assert!(long_functions(decl, 1).len() == 1 && long_functions(decl, 1)[0].2 == "fn d");
}

#[test]
fn documents_keep_their_budgets_and_name_no_issue_numbers() {
    let mut wrong = Vec::new();
    for (doc, budget) in DOC_BUDGETS {
        let text = fs::read_to_string(root().join(doc)).unwrap();
        let n = text.lines().count();
        if n > budget {
            wrong.push(format!("{doc}: {n} lines, over its budget of {budget}"));
        }
    }
    let mut docs = vec![root().join("CHANGELOG.md")];
    docs.extend(DOC_BUDGETS.iter().map(|(d, _)| root().join(d)));
    docs.extend(files_with_ext(&["docs"], "md"));
    for doc in docs {
        let text = fs::read_to_string(&doc).unwrap_or_default();
        for (i, line) in text.lines().enumerate() {
            if names_an_issue(line) {
                wrong.push(format!(
                    "{}:{}: names an issue number: {line}",
                    rel(&doc),
                    i + 1
                ));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "documents by reader (README for users, NOTES the current status, BENCHMARKS the \
         current figures, history in CHANGELOG.md), and say what a thing is, not which issue \
         brought it:\n  {}",
        wrong.join("\n  ")
    );
}

/// "issue 12", "Issue #12", "issues 3 and 4": the tracker's numbers, which mean nothing to a
/// reader of the code or the documents.
fn names_an_issue(line: &str) -> bool {
    let lower = line.to_ascii_lowercase();
    let mut rest = lower.as_str();
    while let Some(i) = rest.find("issue") {
        let after = rest[i + 5..]
            .trim_start_matches('s')
            .trim_start_matches([' ', '#']);
        let word_start = i == 0 || !rest.as_bytes()[i - 1].is_ascii_alphanumeric();
        if word_start && after.starts_with(|c: char| c.is_ascii_digit()) {
            return true;
        }
        rest = &rest[i + 5..];
    }
    false
}

#[test]
fn code_names_no_issue_numbers() {
    let mut sources = rust_sources();
    for ext in ["py", "sh", "java", "toml"] {
        sources.extend(files_with_ext(
            &[".", "python", "scripts", "spark", "tests"],
            ext,
        ));
    }
    let sources: BTreeSet<PathBuf> = sources.into_iter().collect();
    let mut found = Vec::new();
    for p in sources.iter().filter(|p| !is_this_file(p)) {
        let text = fs::read_to_string(p).unwrap_or_default();
        for (i, line) in text.lines().enumerate() {
            if names_an_issue(line) && !line.contains("names_an_issue") {
                found.push(format!("{}:{}", rel(p), i + 1));
            }
        }
    }
    assert!(
        found.is_empty(),
        "code names issue numbers; say what the thing is instead:\n  {}",
        found.join("\n  ")
    );
}

#[test]
fn documents_the_code_cites_exist() {
    let mut sources = rust_sources();
    sources.extend(files_with_ext(
        &["python", "scripts", "tests/cluster", "spark/src"],
        "py",
    ));
    sources.extend(files_with_ext(&["scripts", "tests/cluster"], "sh"));
    let mut missing = BTreeSet::new();
    for p in sources.iter().filter(|p| !is_this_file(p)) {
        let text = fs::read_to_string(p).unwrap_or_default();
        for cited in cited_documents(&text) {
            if !root().join(&cited).is_file() {
                missing.insert(format!("{} cites {cited}", rel(p)));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "documents cited by the code that do not exist (fix the citation or the document):\n  {}",
        missing.iter().cloned().collect::<Vec<_>>().join("\n  ")
    );
}

/// Repository paths of Markdown documents named in `text` (`docs/x.md`, `README.md`, ...);
/// paths outside the repository (`../shared/...`) are not ours to check.
fn cited_documents(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (i, _) in text.match_indices(".md") {
        let after = text[i + 3..].chars().next();
        if after.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
            continue;
        }
        let start = text[..i]
            .rfind(|c: char| !(c.is_ascii_alphanumeric() || "_-./".contains(c)))
            .map_or(0, |s| s + 1);
        let path = &text[start..i + 3];
        if path.starts_with("..")
            || path.starts_with('/')
            || path.len() <= 3
            || path.contains("://")
        {
            continue;
        }
        let path = path.trim_start_matches("./");
        // Only repository documents: top-level ones and those under docs/.
        if path.starts_with("docs/")
            || !path.contains('/') && path.chars().next().is_some_and(|c| c.is_ascii_uppercase())
        {
            out.push(path.to_string());
        }
    }
    out
}

/// Where proptest's default persistence (`SourceParallel("proptest-regressions")`) looks for
/// the seeds of the tests in `source`: beside the nearest folder above it that holds a
/// `lib.rs` or `main.rs`, the same relative path with `.txt`; with no such folder, beside the
/// source as `<name>.proptest-regressions`.
fn regressions_path(source: &Path) -> PathBuf {
    let mut dir = source.to_path_buf();
    while dir.pop() {
        if dir.join("lib.rs").is_file() || dir.join("main.rs").is_file() {
            let suffix = source.strip_prefix(&dir).unwrap().to_path_buf();
            let mut out = dir.clone();
            out.pop();
            out.push("proptest-regressions");
            out.push(suffix);
            out.set_extension("txt");
            return out;
        }
        if dir == root() {
            break;
        }
    }
    source.with_extension("proptest-regressions")
}

#[test]
fn every_proptest_seed_file_sits_where_its_test_looks() {
    let expected: BTreeSet<PathBuf> = rust_sources()
        .iter()
        .filter(|p| fs::read_to_string(p).is_ok_and(|t| t.contains("proptest!")))
        .map(|p| regressions_path(p))
        .collect();
    let mut seeds = files_with_ext(
        &[
            "src",
            "crates",
            "yarn-client",
            "tests",
            "proptest-regressions",
        ],
        "txt",
    );
    seeds.retain(|p| rel(p).contains("proptest-regressions"));
    seeds.extend(files_with_ext(
        &["src", "crates", "yarn-client", "tests"],
        "proptest-regressions",
    ));
    let lost: Vec<String> = seeds
        .iter()
        .filter(|p| !expected.contains(*p))
        .map(|p| rel(p))
        .collect();
    assert!(
        lost.is_empty(),
        "proptest seed files no test reads (proptest looks beside the crate's src folder, \
         the same path with .txt: move each to where its test now lives):\n  {}",
        lost.join("\n  ")
    );
}

#[test]
fn the_core_does_no_io() {
    let mut wrong = Vec::new();
    for p in files_with_ext(&["crates/core/src"], "rs")
        .iter()
        .filter(|p| !is_test_file(p))
    {
        let text = fs::read_to_string(p).unwrap();
        let code = match text.find("#[cfg(test)]") {
            Some(i) => &text[..i],
            None => &text,
        };
        for (i, line) in code.lines().enumerate() {
            let t = line.trim_start();
            if t.starts_with("//") {
                continue;
            }
            for banned in [
                "tokio::",
                "std::fs",
                "std::net",
                "Instant::now",
                "SystemTime::now",
                "std::process",
                "std::thread::sleep",
            ] {
                if line.contains(banned) {
                    wrong.push(format!("{}:{}: {banned}", rel(p), i + 1));
                }
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "the core (crates/core) is sans-IO: time comes in as an argument, files and sockets \
         stay in the processes:\n  {}",
        wrong.join("\n  ")
    );
}

#[test]
fn processes_do_not_import_each_other() {
    let mut wrong = Vec::new();
    for (folder, process) in PROCESSES {
        for p in files_with_ext(&[&format!("src/{folder}")], "rs") {
            if is_test_file(&p) {
                continue; // a test may drive another process's code to check the two agree
            }
            let text = fs::read_to_string(&p).unwrap();
            for (i, line) in text.lines().enumerate() {
                if line.trim_start().starts_with("//") {
                    continue;
                }
                for (other, other_process) in PROCESSES {
                    if other_process == process {
                        continue;
                    }
                    let direct = format!("crate::{other}::");
                    let grouped = format!("crate::{{{other}");
                    let listed = "crate::{";
                    let in_list = line.contains(listed)
                        && line.split(listed).nth(1).is_some_and(|l| {
                            l.split([',', '}', ' '])
                                .any(|w| w == other || w.starts_with(&format!("{other}::")))
                        });
                    if line.contains(&direct) || line.contains(&grouped) || in_list {
                        wrong.push(format!(
                            "{}:{}: {process} imports {other_process} ({})",
                            rel(&p),
                            i + 1,
                            line.trim()
                        ));
                    }
                }
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "a process folder imports another process's code; move what both need into a layer \
         both use (the wire crate for contracts, a shared folder of the binary for I/O):\n  {}",
        wrong.join("\n  ")
    );
}
