//! A real Docker engine for tests, with a tiny image built locally
//! (FROM scratch + Debian's static busybox, through the engine's classic
//! builder; nothing is ever pulled). Without an engine a test skips with a
//! printed reason, unless RASCAL_REQUIRE_DOCKER is set (CI): then a missing
//! engine is a failure.

use bollard::Docker;
use futures::StreamExt;
use rascal_exec::exec::launch::docker as rdocker;
use std::sync::Mutex;

pub const IMAGE: &str = "rascal-test-busybox:1";
const APPLETS: &[&str] = &[
    "sh", "echo", "sleep", "cat", "head", "tr", "seq", "yes", "dd", "id", "env", "ls", "true",
    "false", "printf", "wc", "grep", "tail", "cp",
];

/// A tokio runtime and an engine connection, with the test image built.
pub struct Engine {
    pub rt: tokio::runtime::Runtime,
    pub docker: Docker,
}

static BUILD: Mutex<bool> = Mutex::new(false);

pub fn engine() -> Option<Engine> {
    let skip = |why: String| -> Option<Engine> {
        super::skip("RASCAL_REQUIRE_DOCKER", &format!("no docker engine: {why}"));
        None
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let docker = match rt.block_on(rdocker::connect()) {
        Ok(d) => d,
        Err(e) => return skip(e.to_string()),
    };
    let mut built = BUILD.lock().unwrap_or_else(|e| e.into_inner());
    if !*built {
        if let Err(e) = rt.block_on(build_image(&docker)) {
            return skip(e);
        }
        *built = true;
    }
    drop(built);
    Some(Engine { rt, docker })
}

/// FROM scratch + /bin/busybox with applet symlinks, via the classic builder.
async fn build_image(docker: &Docker) -> Result<(), String> {
    if docker.inspect_image(IMAGE).await.is_ok() {
        return Ok(());
    }
    let busybox = std::fs::read("/bin/busybox").map_err(|e| {
        format!("/bin/busybox is needed to build the test image ({e}); install it with `apt-get install busybox-static`")
    })?;
    let mut tar = tar::Builder::new(Vec::new());
    let dockerfile = b"FROM scratch\nCOPY bin /bin\n";
    let mut h = tar::Header::new_gnu();
    h.set_size(dockerfile.len() as u64);
    h.set_mode(0o644);
    h.set_cksum();
    tar.append_data(&mut h, "Dockerfile", &dockerfile[..])
        .unwrap();
    let mut h = tar::Header::new_gnu();
    h.set_size(busybox.len() as u64);
    h.set_mode(0o755);
    h.set_cksum();
    tar.append_data(&mut h, "bin/busybox", &busybox[..])
        .unwrap();
    for applet in APPLETS {
        let mut h = tar::Header::new_gnu();
        h.set_entry_type(tar::EntryType::Symlink);
        h.set_size(0);
        h.set_mode(0o777);
        tar.append_link(&mut h, format!("bin/{applet}"), "busybox")
            .unwrap();
    }
    let body = tar.into_inner().unwrap();
    let opts = bollard::query_parameters::BuildImageOptionsBuilder::default()
        .dockerfile("Dockerfile")
        .t(IMAGE)
        .rm(true)
        .version(bollard::query_parameters::BuilderVersion::BuilderV1)
        .build();
    let mut s = docker.build_image(opts, None, Some(bollard::body_full(body.into())));
    while let Some(item) = s.next().await {
        let info = item.map_err(|e| format!("building {IMAGE}: {e}"))?;
        if let Some(e) = info.error_detail.and_then(|d| d.message) {
            return Err(format!("building {IMAGE}: {e}"));
        }
    }
    Ok(())
}
