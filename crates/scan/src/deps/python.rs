//! Python's dependency declarations: pyproject.toml (PEP 621 / 735, build
//! requirements, Poetry, uv, PDM, Hatch), Pipfile, poetry.lock / uv.lock
//! (read with the toml crate), requirements files and setup.cfg (read line
//! by line, as pip and setuptools do). Requirement strings follow PEP 508,
//! including `name @ url`; names are compared in PEP 503 form.

use super::dep::{norm_git, norm_path, norm_python, string, table, value_text, Dep, Source};

/// A PEP 508 requirement: `name[extras] (version) ; marker` or
/// `name[extras] @ url ; marker`. A string without a name is kept whole,
/// so any change to it shows.
pub fn pep508(s: &str, section: &str) -> Dep {
    let s = s.trim();
    let end = s
        .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')))
        .unwrap_or(s.len());
    let name = &s[..end];
    if name.is_empty() {
        return Dep::package(s, Source::Url(s.to_string()), section);
    }
    let mut rest = s[end..].trim_start();
    if rest.starts_with('[') {
        rest = rest.split_once(']').map_or("", |x| x.1).trim_start();
    }
    let source = match rest.strip_prefix('@') {
        Some(url) => url_source(url.split_whitespace().next().unwrap_or("")),
        None => Source::Registry(None),
    };
    Dep::package(norm_python(name), source, section)
}

/// Where a URL requirement's code comes from.
fn url_source(url: &str) -> Source {
    let lower = url.to_ascii_lowercase();
    if lower.starts_with("git+") {
        Source::Git(norm_git(url))
    } else if let Some(p) = url
        .strip_prefix("file://")
        .or_else(|| url.strip_prefix("file:"))
    {
        Source::Path(norm_path(p))
    } else if lower.contains("://") || lower.contains('+') {
        Source::Url(url.to_string())
    } else {
        Source::Path(norm_path(url))
    }
}

fn requirement_list(v: Option<&toml::Value>, section: &str, out: &mut Vec<Dep>) {
    for item in v.and_then(toml::Value::as_array).into_iter().flatten() {
        match item.as_str() {
            Some(s) => out.push(pep508(s, section)),
            // `{ include-group = "x" }` names another group of this file.
            None if item
                .as_table()
                .is_some_and(|t| t.contains_key("include-group")) => {}
            None => out.push(Dep::package(
                value_text(item),
                Source::Url(value_text(item)),
                section,
            )),
        }
    }
}

/// A table-style dependency (Poetry, Pipfile, uv sources): a version
/// string, a table naming its source, or a list of those.
fn table_spec(name: &str, v: &toml::Value, section: &str, out: &mut Vec<Dep>) {
    let name = norm_python(name);
    match v {
        toml::Value::String(_) => out.push(Dep::package(name, Source::Registry(None), section)),
        toml::Value::Array(items) => {
            for item in items {
                table_spec(&name, item, section, out);
            }
        }
        toml::Value::Table(t) => {
            let mut sources = Vec::new();
            for (key, value) in t {
                let s = value.as_str().unwrap_or("");
                sources.push(match key.as_str() {
                    "git" => Source::Git(norm_git(s)),
                    "path" | "file" | "directory" | "editable" => Source::Path(norm_path(s)),
                    "url" => url_source(s),
                    "source" | "index" | "registry" => Source::Registry(Some(s.to_string())),
                    "workspace" if value.as_bool() == Some(true) => Source::Local,
                    _ => continue,
                });
            }
            if sources.is_empty() {
                sources.push(Source::Registry(None));
            }
            out.extend(sources.into_iter().map(|s| Dep::package(&name, s, section)));
        }
        other => out.push(Dep::package(name, Source::Url(value_text(other)), section)),
    }
}

/// `[[…source]]` / `[[…index]]` arrays: each a named package index.
fn indexes(v: Option<&toml::Value>, setting: &str, out: &mut Vec<Dep>) {
    for t in v
        .and_then(toml::Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(toml::Value::as_table)
    {
        let name = string(t, "name").unwrap_or("");
        let url = string(t, "url").unwrap_or("");
        out.push(Dep::index(
            format!("{setting} {name}"),
            Source::Url(url.to_string()),
            "",
        ));
    }
}

/// Index URL settings: a string or a list of strings.
fn index_urls(t: &toml::Table, keys: &[&str], prefix: &str, out: &mut Vec<Dep>) {
    for key in keys {
        let values: Vec<&toml::Value> = match t.get(*key) {
            Some(toml::Value::Array(a)) => a.iter().collect(),
            Some(v) => vec![v],
            None => continue,
        };
        for v in values {
            let url = value_text(v);
            out.push(Dep::index(format!("{prefix}{key}"), Source::Url(url), ""));
        }
    }
}

/// Every dependency of a pyproject.toml: PEP 621 `[project]` dependencies
/// and optional-dependencies, PEP 735 `[dependency-groups]`,
/// `[build-system] requires`; Poetry's dependency tables, groups and
/// sources; uv's sources, indexes and extra requirement lists; PDM's and
/// Hatch's development requirements; setuptools' `dynamic` files.
pub fn pyproject(doc: &toml::Table) -> Vec<Dep> {
    let mut out = Vec::new();
    if let Some(project) = table(doc, "project") {
        requirement_list(project.get("dependencies"), "[project]", &mut out);
        for (group, list) in table(project, "optional-dependencies")
            .into_iter()
            .flatten()
        {
            let section = format!("[project.optional-dependencies] {group}");
            requirement_list(Some(list), &section, &mut out);
        }
    }
    for (group, list) in table(doc, "dependency-groups").into_iter().flatten() {
        requirement_list(
            Some(list),
            &format!("[dependency-groups] {group}"),
            &mut out,
        );
    }
    if let Some(build) = table(doc, "build-system") {
        requirement_list(build.get("requires"), "[build-system]", &mut out);
    }
    let tool = table(doc, "tool");
    let tool = |name: &str| tool.and_then(|t| table(t, name));
    if let Some(poetry) = tool("poetry") {
        poetry_tables(poetry, "tool.poetry", &mut out);
        for (name, group) in table(poetry, "group").into_iter().flatten() {
            if let Some(group) = group.as_table() {
                poetry_tables(group, &format!("tool.poetry.group.{name}"), &mut out);
            }
        }
        indexes(poetry.get("source"), "tool.poetry.source", &mut out);
    }
    if let Some(uv) = tool("uv") {
        uv_settings(uv, "tool.uv", &mut out);
    }
    if let Some(pdm) = tool("pdm") {
        for (group, list) in table(pdm, "dev-dependencies").into_iter().flatten() {
            let section = format!("[tool.pdm.dev-dependencies] {group}");
            requirement_list(Some(list), &section, &mut out);
        }
        indexes(pdm.get("source"), "tool.pdm.source", &mut out);
    }
    if let Some(hatch) = tool("hatch") {
        for (env, t) in table(hatch, "envs").into_iter().flatten() {
            for key in ["dependencies", "extra-dependencies"] {
                let section = format!("[tool.hatch.envs.{env}] {key}");
                requirement_list(t.get(key), &section, &mut out);
            }
        }
    }
    if let Some(dynamic) = tool("setuptools").and_then(|s| table(s, "dynamic")) {
        let mut files = Vec::new();
        if let Some(d) = dynamic.get("dependencies") {
            files.push(d);
        }
        files.extend(
            table(dynamic, "optional-dependencies")
                .into_iter()
                .flat_map(|t| t.values()),
        );
        for f in files.iter().filter_map(|v| v.as_table()?.get("file")) {
            let list = f.as_array().cloned().unwrap_or_else(|| vec![f.clone()]);
            for p in list {
                let p = norm_path(&value_text(&p));
                out.push(Dep::index(
                    "tool.setuptools.dynamic file",
                    Source::Path(p),
                    "",
                ));
            }
        }
    }
    out
}

/// uv's settings, under `[tool.uv]` or at the top of a uv.toml: sources,
/// extra requirement lists, indexes and index URLs.
fn uv_settings(uv: &toml::Table, prefix: &str, out: &mut Vec<Dep>) {
    for (name, spec) in table(uv, "sources").into_iter().flatten() {
        table_spec(name, spec, &format!("[{prefix}.sources]"), out);
    }
    for key in [
        "dev-dependencies",
        "override-dependencies",
        "constraint-dependencies",
        "build-constraint-dependencies",
    ] {
        requirement_list(uv.get(key), &format!("[{prefix}] {key}"), out);
    }
    indexes(uv.get("index"), &format!("{prefix}.index"), out);
    let urls = ["index-url", "extra-index-url", "find-links"];
    index_urls(uv, &urls, &format!("{prefix}."), out);
    if let Some(pip) = table(uv, "pip") {
        index_urls(pip, &urls, &format!("{prefix}.pip."), out);
    }
}

/// A uv.toml: uv's settings without the `[tool.uv]` prefix.
pub fn uv_toml(doc: &toml::Table) -> Vec<Dep> {
    let mut out = Vec::new();
    uv_settings(doc, "uv.toml", &mut out);
    out
}

/// Poetry's `dependencies`, `dev-dependencies` (without `python`).
fn poetry_tables(t: &toml::Table, prefix: &str, out: &mut Vec<Dep>) {
    for (key, value) in t {
        if !key.ends_with("dependencies") {
            continue;
        }
        let section = format!("[{prefix}.{key}]");
        for (name, spec) in value.as_table().into_iter().flatten() {
            if name != "python" {
                table_spec(name, spec, &section, out);
            }
        }
    }
}

/// A Pipfile: every package category (`[packages]`, `[dev-packages]`,
/// custom ones) and the `[[source]]` indexes.
pub fn pipfile(doc: &toml::Table) -> Vec<Dep> {
    let mut out = Vec::new();
    for (category, t) in doc {
        if matches!(
            category.as_str(),
            "source" | "requires" | "scripts" | "pipenv"
        ) {
            continue;
        }
        let section = format!("[{category}]");
        for (name, spec) in t.as_table().into_iter().flatten() {
            table_spec(name, spec, &section, &mut out);
        }
    }
    indexes(doc.get("source"), "source", &mut out);
    out
}

/// Every `[[package]]` of a poetry.lock or uv.lock, with its source.
pub fn lock(doc: &toml::Table) -> Vec<Dep> {
    let mut out = Vec::new();
    for p in doc
        .get("package")
        .and_then(toml::Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(toml::Value::as_table)
    {
        let Some(name) = string(p, "name") else {
            continue;
        };
        let name = norm_python(name);
        let source = match table(p, "source") {
            None => Source::Registry(None),
            // poetry.lock: `[package.source] type = "git", url = "…"`.
            Some(s) if s.contains_key("type") => {
                let url = string(s, "url").unwrap_or("");
                match string(s, "type").unwrap_or("") {
                    "git" => Source::Git(norm_git(url)),
                    "directory" | "file" => Source::Path(norm_path(url)),
                    "legacy" => Source::Registry(Some(url.to_string())),
                    other => Source::Url(format!("{other} {url}")),
                }
            }
            // uv.lock: `source = { registry = "…" }`, `{ git = "…" }`…
            Some(s) => {
                let mut found = None;
                for (key, v) in s {
                    let v = v.as_str().unwrap_or("");
                    found = Some(match key.as_str() {
                        "registry" => Source::Registry(Some(v.to_string())),
                        "git" => Source::Git(norm_git(v)),
                        "path" | "directory" | "editable" | "virtual" => Source::Path(norm_path(v)),
                        _ => Source::Url(format!("{key} {v}")),
                    });
                }
                found.unwrap_or(Source::Registry(None))
            }
        };
        out.push(Dep::package(name, source, "[[package]]"));
    }
    out
}

/// Join lines ending in `\` and drop comments (`#` at the start or after
/// whitespace), as pip does.
fn logical_lines(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut acc = String::new();
    for raw in text.lines() {
        let line = match raw
            .char_indices()
            .find(|&(i, c)| c == '#' && (i == 0 || raw[..i].ends_with(char::is_whitespace)))
        {
            Some((i, _)) => &raw[..i],
            None => raw,
        };
        match line.strip_suffix('\\') {
            Some(head) if raw.len() == line.len() => acc.push_str(head),
            _ => {
                acc.push_str(line);
                out.push(std::mem::take(&mut acc));
            }
        }
    }
    if !acc.is_empty() {
        out.push(acc);
    }
    out
}

/// A requirement given as a URL or path (`-e`, or a bare line): named by
/// its `#egg=` fragment, else by itself.
fn located(spec: &str, section: &str) -> Dep {
    let name = spec
        .split_once("#egg=")
        .map(|(_, n)| n.split('&').next().unwrap_or(n))
        .map_or_else(|| spec.to_string(), norm_python);
    Dep::package(
        name,
        url_source(spec.split("#egg=").next().unwrap_or(spec)),
        section,
    )
}

/// The URL or path a requirement line names instead of a PEP 508
/// requirement (`https://…`, `git+https://…`, `./dir`, `file:…`, `dir/x.whl`).
fn link_line(line: &str) -> Option<&str> {
    let first = line.split([' ', '\t', ';']).next().unwrap_or(line);
    let scheme = first.find("://").is_some_and(|i| {
        first[..i]
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '+')
    });
    let path = first.starts_with(['.', '/', '~'])
        || first.to_ascii_lowercase().starts_with("file:")
        || (first.contains('/') && !first.contains('@'));
    (scheme || path).then_some(first)
}

/// A requirements file: requirements, `-e` editables, bare URLs and paths,
/// and the options that pull in other files (`-r`, `-c`) or other indexes
/// (`-i`, `--extra-index-url`, `-f`).
pub fn requirements(text: &str) -> Vec<Dep> {
    let mut out = Vec::new();
    for line in logical_lines(text) {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        if line.starts_with('-') {
            let (opt, value) = if line.starts_with("--") {
                match line.find(|c: char| c == '=' || c.is_whitespace()) {
                    Some(i) => (&line[..i], &line[i + 1..]),
                    None => (line, ""),
                }
            } else {
                let i = line.char_indices().nth(2).map_or(line.len(), |(i, _)| i);
                (&line[..i], &line[i..])
            };
            let value = value.trim().trim_start_matches('=').trim();
            let long = match opt {
                "-r" | "--requirement" => "--requirement",
                "-c" | "--constraint" => "--constraint",
                "-e" | "--editable" => {
                    out.push(located(value, "-e"));
                    continue;
                }
                "-i" | "--index-url" => "--index-url",
                "--extra-index-url" => "--extra-index-url",
                "-f" | "--find-links" => "--find-links",
                _ => continue,
            };
            let source = if long.ends_with("ment") || long.ends_with("constraint") {
                Source::Path(norm_path(value))
            } else {
                Source::Url(value.to_string())
            };
            out.push(Dep::index(long, source, ""));
        } else if let Some(link) = link_line(line) {
            out.push(located(link, ""));
        } else {
            out.push(pep508(line, ""));
        }
    }
    out
}

/// setup.cfg: `install_requires`, `setup_requires`, `tests_require` of
/// `[options]` and every list of `[options.extras_require]`. As in
/// setuptools, a one-line value is split at `;`, a multi-line one by line.
pub fn setup_cfg(text: &str) -> Vec<Dep> {
    // (section and key, value lines)
    let mut values: Vec<(String, Vec<&str>)> = Vec::new();
    let mut section = String::new();
    let mut collecting = false;
    for raw in text.lines() {
        let trimmed = raw.trim();
        if trimmed.is_empty() || trimmed.starts_with(['#', ';']) {
            continue;
        }
        if raw.starts_with(char::is_whitespace) {
            if collecting {
                if let Some((_, lines)) = values.last_mut() {
                    lines.push(trimmed);
                }
            }
            continue;
        }
        if trimmed.starts_with('[') {
            section = trimmed.trim_matches(['[', ']']).trim().to_ascii_lowercase();
            collecting = false;
            continue;
        }
        let Some((key, value)) = trimmed.split_once(['=', ':']) else {
            collecting = false;
            continue;
        };
        let key = key.trim().to_ascii_lowercase().replace('-', "_");
        collecting = (section == "options"
            && matches!(
                key.as_str(),
                "install_requires" | "setup_requires" | "tests_require"
            ))
            || section == "options.extras_require";
        if collecting {
            let value = value.trim();
            let first = if value.is_empty() {
                vec![]
            } else {
                vec![value]
            };
            values.push((format!("[{section}] {key}"), first));
        }
    }
    let mut out = Vec::new();
    for (at, lines) in values {
        if let [one] = lines.as_slice() {
            if let Some(files) = one.strip_prefix("file:") {
                for f in files.split([',', ' ']).filter(|f| !f.is_empty()) {
                    out.push(Dep::index("file:", Source::Path(norm_path(f)), at.clone()));
                }
                continue;
            }
        }
        let reqs: Vec<&str> = match lines.as_slice() {
            [one] => one.split(';').collect(),
            many => many.to_vec(),
        };
        for r in reqs.iter().filter(|r| !r.trim().is_empty()) {
            out.push(pep508(r, &at));
        }
    }
    out
}

#[cfg(test)]
mod tests;
