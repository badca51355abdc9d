//! Which Docker engine rascal talks to: one answer for the docker launcher,
//! copy mode and doctor, so their messages name the same address.

/// The engine address rascal talks to, for messages.
pub fn engine_address() -> String {
    std::env::var("DOCKER_HOST").unwrap_or_else(|_| "unix:///var/run/docker.sock".into())
}
