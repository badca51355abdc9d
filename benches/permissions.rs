//! Layer 4 permissions throughput: 100,000 changed paths against 200
//! allowed/denied globs, and forbidden-import detection over added lines.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use rascal_core::config::permissions::{GlobPattern, PermissionsConfig};
use rascal_core::model::changeset::{ChangeSet, FileChange, Operation};
use rascal_engine::layers::Permissions;
use rascal_scan::imports::new_imports;
use std::hint::black_box;

fn glob(s: String) -> GlobPattern {
    GlobPattern::try_from(s).expect("valid glob")
}

/// 100 allowed + 100 denied globs of the usual shapes.
fn config() -> PermissionsConfig {
    let mut allowed = Vec::new();
    let mut denied = Vec::new();
    for i in 0..100 {
        allowed.push(glob(match i % 4 {
            0 => format!("pkg{i}/**"),
            1 => format!("src/mod{i}/*.rs"),
            2 => format!("*.ext{i}"),
            _ => format!("lib/{i}/**/*.go"),
        }));
        denied.push(glob(match i % 4 {
            0 => format!("pkg{i}/secret/**"),
            1 => format!("gen{i}.rs"),
            2 => format!("*.sql{i}"),
            _ => format!(".ci{i}/**"),
        }));
    }
    PermissionsConfig {
        allowed_paths: allowed,
        denied_paths: denied,
        max_files_changed: Some(1_000_000),
        denied_operations: vec![rascal_core::config::permissions::OpName::Delete],
        ..Default::default()
    }
}

fn paths(n: usize) -> ChangeSet {
    let files = (0..n)
        .map(|i| {
            let path = match i % 5 {
                0 => format!("pkg{}/a/b/file{i}.rs", i % 100),
                1 => format!("src/mod{}/f{i}.rs", i % 100),
                2 => format!("deep/x/y/z/w{i}.ext{}", i % 100),
                3 => format!("./lib/{}/q/../r/m{i}.go", i % 100),
                _ => format!("other/dir/n{i}.txt"),
            };
            FileChange::new(path, Operation::Modify)
        })
        .collect();
    ChangeSet {
        base: String::new(),
        tree: String::new(),
        files,
    }
}

fn bench_paths(c: &mut Criterion) {
    let perms = Permissions::compile(&config()).expect("compile");
    let set = paths(100_000);
    let mut g = c.benchmark_group("permissions");
    g.sample_size(10);
    g.throughput(Throughput::Elements(set.files.len() as u64));
    g.bench_function("100k_paths_x_200_globs", |b| {
        b.iter(|| black_box(perms.check(black_box(&set))).len())
    });
    g.finish();
}

fn bench_imports(c: &mut Criterion) {
    let go: Vec<String> = (0..10_000)
        .map(|i| match i % 4 {
            0 => "import (".to_string(),
            1 => format!("\tp{i} \"example.com/pkg/{i}\""),
            2 => ")".to_string(),
            _ => format!("func f{i}() {{ return nil }}"),
        })
        .collect();
    let rs: Vec<String> = (0..10_000)
        .map(|i| match i % 3 {
            0 => format!("use crate::m{i}::{{a, b::{{c, d}}}};"),
            1 => format!("let x{i} = y + 1;"),
            _ => "pub use std::process::Command as C;".to_string(),
        })
        .collect();
    let py: Vec<String> = (0..10_000)
        .map(|i| match i % 3 {
            0 => format!("from pkg{i}.sub import a, b as c"),
            1 => format!("x{i} = compute({i})"),
            _ => "import os, subprocess as sp".to_string(),
        })
        .collect();
    let js: Vec<String> = (0..10_000)
        .map(|i| match i % 3 {
            0 => format!("import {{ a{i} }} from './mod{i}';"),
            1 => format!("const v{i} = require('lib{i}');"),
            _ => format!("console.log({i});"),
        })
        .collect();
    let files = [
        FileChange::new("a.go", Operation::Create).with_lines(&go),
        FileChange::new("a.rs", Operation::Create).with_lines(&rs),
        FileChange::new("a.py", Operation::Create).with_lines(&py),
        FileChange::new("a.ts", Operation::Create).with_lines(&js),
    ];
    let lines: u64 = files.iter().map(|f| f.added_lines.len() as u64).sum();
    let mut g = c.benchmark_group("imports");
    g.sample_size(10);
    g.throughput(Throughput::Elements(lines));
    g.bench_function("new_imports_40k_lines", |b| {
        b.iter(|| {
            files
                .iter()
                .map(|f| new_imports(black_box(f)).len())
                .sum::<usize>()
        })
    });
    let cfg = PermissionsConfig {
        forbidden_imports: vec!["os/exec".into(), "std::process".into(), "subprocess".into()],
        ..Default::default()
    };
    let perms = Permissions::compile(&cfg).expect("compile");
    let set = ChangeSet {
        base: String::new(),
        tree: String::new(),
        files: files.to_vec(),
    };
    g.bench_function("forbidden_import_check_40k_lines", |b| {
        b.iter(|| black_box(perms.check(black_box(&set))).len())
    });
    g.finish();
}

criterion_group!(benches, bench_paths, bench_imports);
criterion_main!(benches);
