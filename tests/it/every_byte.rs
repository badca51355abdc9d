//! Scanners see every byte (docs/architecture.md, "Security invariants", 7): the ways an agent could hide a
//! secret, a banned pattern or a forbidden import from the layers, each on a
//! real repository, through the real ChangeSet and the real checks — long
//! padding, a NUL that made source "binary", a key in a binary file, a file
//! over the scan limit, encodings, and a key split over string pieces.
//!
//! Fake secrets are generated from a seeded PRNG, so no real-looking secret
//! literal sits in this file.

use crate::common;
use common::{rnd, TestRepo};
use rascal_core::config::Config;
use rascal_core::model::verdict::{gate, Report, Severity, Status, Verdict};
use rascal_engine::pipeline::{permissions_in_force, verify_read, Origin, Verification};
use rascal_engine::pipeline::{read_change, ContentRead};
use rascal_exec::git::workspace;
use tokio_util::sync::CancellationToken;

const UPPER_NUM: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
const ALNUM: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

fn aws_key(seed: u64) -> String {
    "AKIA".to_string() + &rnd(seed, 16, UPPER_NUM)
}

fn github_token(seed: u64) -> String {
    "ghp_".to_string() + &rnd(seed, 36, ALNUM)
}

fn base64(bytes: &[u8], alphabet: &[u8; 64]) -> String {
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk.iter().fold(0u32, |acc, &b| (acc << 8) | b as u32) << (8 * (3 - chunk.len()));
        for k in 0..=chunk.len() {
            out.push(alphabet[((n >> (18 - 6 * k)) & 63) as usize] as char);
        }
    }
    while !out.len().is_multiple_of(4) {
        out.push('=');
    }
    out
}

const STD: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const URL: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

const SECRETS: &str = "guardrails:\n  - { name: secrets, builtin: secrets }\n  - { name: banned, patterns: ['dbg!\\('], scope: diff-only }\n";
const NO_PROCESS: &str = "permissions:\n  forbidden_imports: ['std::process']\n";

/// Every read-only check of the working tree's change against its base —
/// on the ChangeSet held whole and on the same ChangeSet streamed file by
/// file (`rascal check`): both must report exactly the same.
fn check(t: &TestRepo, guardrails: &str) -> Vec<Report> {
    let cfg = Config::from_texts(None, Some(guardrails), Some(NO_PROCESS)).expect("config");
    let changes = workspace::changeset(t.path(), t.path(), t.head()).unwrap();
    let (streamed, read) = read_change(
        &cfg,
        permissions_in_force(&cfg, Origin::Human).as_ref(),
        t.path(),
        t.path(),
        t.head(),
        &Default::default(),
    )
    .unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let run = |changes: &rascal_core::model::changeset::ChangeSet, read: Option<&ContentRead>| {
        rt.block_on(async {
            let place = rascal_exec::exec::place::Place::InPlace {
                origin: t.path().to_path_buf(),
            };
            let v = Verification {
                config: &cfg,
                place: &place,
                changes,
                origin: Origin::Human,
                allow_test_changes: &[],
                cancel: CancellationToken::new(),
            };
            let mut reports = verify_read(&v, read, &|_| {}).await;
            for r in &mut reports {
                r.duration_ms = 0;
            }
            reports
        })
    };
    let whole = run(&changes, None);
    assert_eq!(
        whole,
        run(&streamed, Some(&read)),
        "the streamed ChangeSet is judged as the whole one"
    );
    whole
}

fn report<'a>(reports: &'a [Report], name: &str) -> &'a Report {
    reports
        .iter()
        .find(|r| r.check == name)
        .unwrap_or_else(|| panic!("no report {name}: {reports:#?}"))
}

/// The issues of check `name` with rule `rule`, as (path, line, message).
fn hits(reports: &[Report], name: &str, rule: &str) -> Vec<(String, Option<u32>, String)> {
    report(reports, name)
        .issues
        .iter()
        .filter(|i| i.rule == rule)
        .map(|i| {
            (
                i.path.clone().unwrap_or_default(),
                i.line,
                i.message.clone(),
            )
        })
        .collect()
}

/// The secrets report never carries `secret`. (A banned-pattern hit shows
/// its line, secret or not.)
fn assert_no_leak(reports: &[Report], secret: &str) {
    let json = serde_json::to_string(report(reports, "secrets")).unwrap();
    assert!(
        !json.contains(secret),
        "the secrets report leaks the secret"
    );
}

fn repo() -> TestRepo {
    TestRepo::new(&[("src/lib.rs", "pub fn one() -> u32 {\n    1\n}\n")])
}

#[test]
fn padding_before_a_payload_hides_nothing() {
    let t = repo();
    let key = aws_key(1);
    let pad = " ".repeat(17_000);
    t.write(
        "src/pad.rs",
        &format!(
            "pub fn f() {{\n{pad}let k = \"{key}\"; dbg!(k);\n}}\n{pad}use std::process::Command;\n"
        ),
    );
    let r = check(&t, SECRETS);
    let aws = hits(&r, "secrets", "secrets/aws-access-key-id");
    assert_eq!(aws.len(), 1, "{r:#?}");
    assert_eq!((aws[0].0.as_str(), aws[0].1), ("src/pad.rs", Some(2)));
    assert_eq!(report(&r, "banned").status, Status::Fail);
    assert_eq!(hits(&r, "banned", "guardrails/banned")[0].1, Some(2));
    let imports = hits(&r, "permissions", "permissions/forbidden-import");
    assert_eq!(imports.len(), 1, "{r:#?}");
    assert_eq!(imports[0].1, Some(4));
    assert_eq!(gate(&r), Verdict::Fail);
    assert_no_leak(&r, &key);
}

#[test]
fn a_nul_in_a_comment_does_not_make_source_binary() {
    let t = repo();
    let key = aws_key(2);
    t.write(
        "src/evil.rs",
        &format!(
            "// \0 not a binary\nuse std::process::Command;\npub fn f() {{\n    let k = \"{key}\";\n    dbg!(k);\n}}\n"
        ),
    );
    let cs = workspace::changeset(t.path(), t.path(), t.head()).unwrap();
    let f = cs.files.iter().find(|f| f.path == "src/evil.rs").unwrap();
    assert!(!f.binary);
    assert_eq!(f.added, 6);

    let r = check(&t, SECRETS);
    assert_eq!(
        hits(&r, "secrets", "secrets/aws-access-key-id")[0].1,
        Some(4),
        "{r:#?}"
    );
    assert_eq!(hits(&r, "banned", "guardrails/banned")[0].1, Some(5));
    assert_eq!(
        hits(&r, "permissions", "permissions/forbidden-import")[0].1,
        Some(2)
    );
    assert_no_leak(&r, &key);
}

#[test]
fn a_secret_in_a_real_binary_is_found() {
    let t = repo();
    let key = aws_key(3);
    let token = github_token(4);
    // A PNG: signature, IHDR, a tEXt chunk holding the key, pixel bytes.
    let mut png =
        b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x10\0\0\0\x10\x08\x06\0\0\0\x1f\xf3\xffa".to_vec();
    png.extend_from_slice(b"\0\0\0\x1ftEXtComment\0");
    let at = png.len();
    png.extend_from_slice(key.as_bytes());
    png.extend_from_slice(b"\xde\xad\xbe\xef\0\0\0\0IEND\xaeB`\x82dbg!(x)\xff");
    t.write_bytes("assets/logo.png", &png);
    // A key in UTF-16, as Windows resources hold strings.
    let mut res = vec![0xffu8, 0xfe, 0, 1];
    for b in format!("token={token}").bytes() {
        res.extend_from_slice(&[b, 0]);
    }
    res.extend_from_slice(&[0xff, 0xff, 0, 0]);
    t.write_bytes("assets/app.res", &res);

    let cs = workspace::changeset(t.path(), t.path(), t.head()).unwrap();
    assert!(cs
        .files
        .iter()
        .all(|f| f.binary && f.added_lines.is_empty()));

    let r = check(&t, SECRETS);
    let aws = hits(&r, "secrets", "secrets/aws-access-key-id");
    assert_eq!(aws.len(), 1, "{r:#?}");
    assert_eq!(aws[0].0, "assets/logo.png");
    let place = format!("binary content at byte {at}");
    assert!(aws[0].2.contains(&place), "{}", aws[0].2);
    let gh = hits(&r, "secrets", "secrets/github-token");
    assert_eq!(gh.len(), 1, "{r:#?}");
    assert_eq!(gh[0].0, "assets/app.res");
    assert_eq!(report(&r, "secrets").status, Status::Fail);
    // Binary stays binary for banned patterns.
    assert_eq!(report(&r, "banned").status, Status::Pass);
    assert_no_leak(&r, &key);
    assert_no_leak(&r, &token);
}

#[test]
fn a_file_over_max_file_bytes_is_named_unscanned_and_fails_unless_allowed() {
    let t = repo();
    let early = aws_key(5);
    let late = aws_key(6);
    let mut dump = format!("-- {early}\n");
    while dump.len() < 1024 * 1024 + 10 {
        dump.push_str("insert into t values (1, 'plain row of data');\n");
    }
    dump.push_str(&format!("-- {late}\n"));
    t.write("data/dump.sql", &dump);

    // By default every byte is scanned (streamed, up to 1 GiB a file).
    let r = check(&t, SECRETS);
    assert_eq!(hits(&r, "secrets", "secrets/aws-access-key-id").len(), 2);
    assert!(
        hits(&r, "secrets", "secrets/unscanned").is_empty(),
        "{r:#?}"
    );

    // Below the file's size: what fits is scanned; the rest is named, and
    // fails the check.
    let limited = "guardrails:\n  - { name: secrets, builtin: secrets, max_file_bytes: 1048576 }\n";
    let r = check(&t, limited);
    assert_eq!(hits(&r, "secrets", "secrets/aws-access-key-id").len(), 1);
    let unscanned = hits(&r, "secrets", "secrets/unscanned");
    assert_eq!(unscanned.len(), 1, "{r:#?}");
    assert_eq!(unscanned[0].0, "data/dump.sql");
    assert!(
        unscanned[0].2.contains("not fully scanned")
            && unscanned[0].2.contains("unscanned_allowed"),
        "{}",
        unscanned[0].2
    );
    let issue = report(&r, "secrets")
        .issues
        .iter()
        .find(|i| i.rule == "secrets/unscanned")
        .unwrap();
    assert_eq!(issue.severity, Severity::Error);

    // Without the early key the file alone: still a failure …
    let clean = dump.replacen(&format!("-- {early}\n"), "-- header\n", 1);
    t.write("data/dump.sql", &clean);
    let r = check(&t, limited);
    assert_eq!(report(&r, "secrets").status, Status::Fail, "{r:#?}");
    assert_eq!(gate(&r), Verdict::Fail);
    // … a warning when its path is allowed unscanned, or with
    // `on_unscanned: warn`.
    for lenient in [
        "guardrails:\n  - { name: secrets, builtin: secrets, max_file_bytes: 1048576, unscanned_allowed: ['data/*.sql'] }\n",
        "guardrails:\n  - { name: secrets, builtin: secrets, max_file_bytes: 1048576, on_unscanned: warn }\n",
    ] {
        let r = check(&t, lenient);
        assert_eq!(report(&r, "secrets").status, Status::Warn, "{r:#?}");
    }

    // A binary over the limit too.
    std::fs::remove_file(t.path().join("data/dump.sql")).unwrap();
    let mut blob = vec![0u8, 0xff, 0xfe];
    blob.resize(1024 * 1024 + 100, 0xab);
    blob.extend_from_slice(late.as_bytes());
    t.write_bytes("data/blob.bin", &blob);
    let r = check(&t, limited);
    let unscanned = hits(&r, "secrets", "secrets/unscanned");
    assert_eq!(unscanned.len(), 1, "{r:#?}");
    assert_eq!(unscanned[0].0, "data/blob.bin");
    assert_eq!(report(&r, "secrets").status, Status::Fail);
    assert_no_leak(&r, &late);
    // Scanned whole by default: the key is found.
    let r = check(&t, SECRETS);
    assert_eq!(
        hits(&r, "secrets", "secrets/aws-access-key-id").len(),
        1,
        "{r:#?}"
    );
    assert!(hits(&r, "secrets", "secrets/unscanned").is_empty());
}

#[test]
fn base64_and_hex_encoded_keys_are_decoded() {
    let t = repo();
    let a = aws_key(7);
    let b = aws_key(8);
    let c = github_token(9);
    let line_a = base64(format!("aws_access_key_id = {a}\n").as_bytes(), STD);
    let hex_b: String = b.bytes().map(|x| format!("{x:02x}")).collect();
    // Url-safe, with the bytes around it chosen to need `-` and `_`.
    let mut raw = vec![0xfbu8, 0xff];
    raw.extend_from_slice(c.as_bytes());
    raw.push(0xfe);
    let url_c = base64(&raw, URL);
    assert!(url_c.contains(['-', '_']), "{url_c}");
    t.write(
        "config/app.yaml",
        &format!("settings: {line_a}\nfingerprint: 0x{hex_b}\nblob: \"{url_c}\"\n"),
    );
    let r = check(&t, SECRETS);
    let aws = hits(&r, "secrets", "secrets/aws-access-key-id");
    assert_eq!(aws.len(), 2, "{r:#?}");
    assert_eq!(aws[0].1, Some(1));
    assert!(aws[0].2.contains("base64-encoded"), "{}", aws[0].2);
    assert_eq!(aws[1].1, Some(2));
    assert!(aws[1].2.contains("hex-encoded"), "{}", aws[1].2);
    let gh = hits(&r, "secrets", "secrets/github-token");
    assert_eq!(gh.len(), 1, "{r:#?}");
    assert_eq!(gh[0].1, Some(3));
    assert!(gh[0].2.contains("base64-encoded"), "{}", gh[0].2);
    for s in [&a, &b, &c] {
        assert_no_leak(&r, s);
    }
}

#[test]
fn a_key_split_into_string_pieces_is_joined() {
    let t = repo();
    let key = aws_key(10);
    let token = github_token(11);
    t.write(
        "web/keys.js",
        &format!("const id = \"{}\" +\n    \"{}\";\n", &key[..4], &key[4..]),
    );
    t.write(
        "tool/keys.py",
        &format!(
            "TOKEN = (\"{}\"\n         \"{}\")\n",
            &token[..10],
            &token[10..]
        ),
    );
    let r = check(&t, SECRETS);
    let aws = hits(&r, "secrets", "secrets/aws-access-key-id");
    assert_eq!(aws.len(), 1, "{r:#?}");
    assert_eq!((aws[0].0.as_str(), aws[0].1), ("web/keys.js", Some(1)));
    assert!(
        aws[0].2.contains("split into string pieces"),
        "{}",
        aws[0].2
    );
    let gh = hits(&r, "secrets", "secrets/github-token");
    assert_eq!(gh.len(), 1, "{r:#?}");
    assert_eq!((gh[0].0.as_str(), gh[0].1), ("tool/keys.py", Some(1)));
    assert_no_leak(&r, &key);
    assert_no_leak(&r, &token);
}

#[test]
fn banned_patterns_over_every_file_read_nul_text_and_big_changed_files() {
    let t = repo();
    t.write("src/evil.rs", "// \0\npub fn f() { dbg!(1); }\n");
    let mut big = "// filler line of a generated file, nothing to see\n".repeat(45_000);
    big.push_str("pub fn g() { dbg!(2); }\n");
    assert!(big.len() > 2 * 1024 * 1024);
    t.write("src/big.rs", &big);
    let r = check(
        &t,
        "guardrails:\n  - { name: banned, patterns: ['dbg!\\('], scope: all }\n",
    );
    let mut paths: Vec<String> = hits(&r, "banned", "guardrails/banned")
        .into_iter()
        .map(|h| h.0)
        .collect();
    paths.sort();
    assert_eq!(paths, vec!["src/big.rs", "src/evil.rs"], "{r:#?}");
}
