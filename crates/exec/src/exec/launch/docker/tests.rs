//! Unit tests of `docker`.

use super::*;
use crate::exec::launch::lines::MAX_LINE;

#[test]
fn lines_are_split_cut_and_skipped() {
    let mut out = Vec::new();
    let mut l = Lines::new(Stream::Stdout, 1);
    l.push(b"skipped\nfirst\r\nsec", &mut out);
    l.push(b"ond\n", &mut out);
    l.push(&vec![b'x'; MAX_LINE + 10], &mut out);
    l.finish(&mut out);
    let got: Vec<String> = out.into_iter().map(|x| x.text).collect();
    assert_eq!(got[0], "first");
    assert_eq!(got[1], "second");
    assert!(got[2].ends_with("[line cut: 10 more bytes]"));
    assert_eq!(got.len(), 3);
}

#[test]
fn a_planned_runs_criteria_file_is_bound_at_the_containers_path() {
    let spec = LaunchSpec {
        run: "r".into(),
        candidate: "a".into(),
        workdir: "/tmp/ws".into(),
        argv: vec!["sh".into()],
        env: vec![(
            crate::exec::env::CRITERIA_ENV.into(),
            "/state/runs/r/a/criteria.json".into(),
        )],
        stdin: None,
        timeout: std::time::Duration::from_secs(1),
        image: Some("img".into()),
        agent: None,
        repo: "/repo".into(),
        resume: None,
        confine: None,
        upload: None,
    };
    let body = container_body(&spec, 0);
    assert!(body
        .env
        .unwrap()
        .contains(&format!("RASCAL_CRITERIA_FILE={CRITERIA}")));
    let binds = body.host_config.unwrap().binds.unwrap();
    assert!(
        binds.contains(&format!("/state/runs/r/a/criteria.json:{CRITERIA}:ro")),
        "{binds:?}"
    );
}

#[test]
fn container_names_are_what_docker_accepts() {
    assert_eq!(
        container_name("r-20261129-1a2b", "claude/2 x"),
        "rascal-r-20261129-1a2b-claude_2_x"
    );
}
