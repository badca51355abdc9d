//! Unit tests of `limits`.

use super::*;

fn v2(subtree: &[&str], controllers: &[&str]) -> FoundV2 {
    FoundV2 {
        dir: "/sys/fs/cgroup/user.slice/x.scope".into(),
        writable: true,
        controllers: controllers.iter().map(|s| s.to_string()).collect(),
        subtree: subtree.iter().map(|s| s.to_string()).collect(),
        is_root: false,
        only_rascal: false,
    }
}

#[test]
fn delegated_cgroup_v2_is_used_as_it_is() {
    let found = Found {
        v2: Some(v2(&["cpu", "memory", "pids"], &["cpu", "memory", "pids"])),
        ..Found::default()
    };
    assert_eq!(
        decide(&found),
        Mechanism::CgroupV2 {
            parent: "/sys/fs/cgroup/user.slice/x.scope".into(),
            enable: Enable::Ready
        }
    );
}

#[test]
fn controllers_are_turned_on_in_the_root_or_when_rascal_is_alone() {
    let mut f = v2(&[], &["memory", "pids"]);
    f.is_root = true;
    let m = decide(&Found {
        v2: Some(f.clone()),
        ..Found::default()
    });
    assert!(matches!(
        m,
        Mechanism::CgroupV2 {
            enable: Enable::Controllers,
            ..
        }
    ));
    f.is_root = false;
    f.only_rascal = true;
    let m = decide(&Found {
        v2: Some(f.clone()),
        ..Found::default()
    });
    assert!(matches!(
        m,
        Mechanism::CgroupV2 {
            enable: Enable::MoveSelf,
            ..
        }
    ));
    // Shared with other processes: not rascal's to reorganise.
    f.only_rascal = false;
    let m = decide(&Found {
        v2: Some(f),
        ..Found::default()
    });
    let Mechanism::Rlimit { why } = m else {
        panic!("{m:?}")
    };
    assert!(why.contains("holds other processes"), "{why}");
}

#[test]
fn cgroup_v1_when_v2_cannot_and_both_hierarchies_are_writable() {
    // This machine's shape: a hybrid layout, v2 with only hugetlb.
    let found = Found {
        v2: Some(v2(&[], &["hugetlb"])),
        v1_pids: Some("/sys/fs/cgroup/pids".into()),
        v1_memory: Some("/sys/fs/cgroup/memory/x".into()),
    };
    assert_eq!(
        decide(&found),
        Mechanism::CgroupV1 {
            pids: "/sys/fs/cgroup/pids".into(),
            memory: "/sys/fs/cgroup/memory/x".into()
        }
    );
    let only_pids = Found {
        v1_memory: None,
        ..found
    };
    let m = decide(&only_pids);
    let Mechanism::Rlimit { why } = &m else {
        panic!("{m:?}")
    };
    assert!(
        why.contains("does not delegate") && why.contains("v1"),
        "{why}"
    );
    assert!(m.describe().contains("RLIMIT_NPROC"));
}

#[test]
fn read_only_cgroup_falls_back_to_rlimits() {
    let mut f = v2(&["memory", "pids"], &["memory", "pids"]);
    f.writable = false;
    let m = decide(&Found {
        v2: Some(f),
        ..Found::default()
    });
    let Mechanism::Rlimit { why } = m else {
        panic!()
    };
    assert!(why.contains("not writable"), "{why}");
    assert!(matches!(
        decide(&Found::default()),
        Mechanism::Rlimit { .. }
    ));
}

#[test]
fn mountinfo_lines_give_cgroup_mounts() {
    let info = "35 25 0:30 / /sys/fs/cgroup/pids rw,relatime shared:14 - cgroup cgroup rw,pids\n\
                    36 25 0:31 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n\
                    22 1 8:1 / / rw - ext4 /dev/sda1 rw\n";
    let m = mounts(info);
    assert_eq!(m.len(), 2);
    assert_eq!(m[0].0, "cgroup");
    assert_eq!(m[0].2, "/sys/fs/cgroup/pids");
    assert_eq!(m[0].3, "rw,pids");
    assert_eq!(m[1].0, "cgroup2");
}

#[test]
fn only_cgroups_of_gone_rascal_processes_are_stale() {
    let me = Owner::me();
    assert!(me.pidns > 0 && me.start > 0, "{me:?}");
    let name = |pidns: u64, pid: u32, start: u64| format!("rascal-{pidns}-{pid}-{start}-3");
    // No such process.
    assert!(stale(&name(me.pidns, 4194304, 7)));
    // This process's own.
    assert!(!stale(&format!("{}3", me.prefix())));
    // Its pid reused: pid 1 exists, but did not start at tick 1.
    assert!(stale(&name(me.pidns, 1, 1)));
    // pid 1 as it is: alive.
    let init = start_time(1).unwrap();
    assert!(!stale(&name(me.pidns, 1, init)));
    // Another pid namespace's: not this process's to judge.
    assert!(!stale(&name(me.pidns + 1, 4194304, 7)));
    // Not a sandbox's: a MoveSelf leaf, an older name, anything else.
    assert!(!stale("rascal-4194304999"));
    assert!(!stale("rascal-4194304999-3"));
    assert!(!stale("user.slice"));
    assert_eq!(
        Owner::of(&name(9, 8, 7)),
        Some(Owner {
            pidns: 9,
            pid: 8,
            start: 7
        })
    );
}

#[test]
fn hits_name_the_limit() {
    let l = Limits {
        pids: 512,
        memory: 2 << 30,
    };
    assert_eq!(Hit::Pids.reason(&l), "512 processes");
    assert_eq!(Hit::Memory.reason(&l), "memory 2 GiB");
}
