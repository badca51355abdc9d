//! `rascal __egress-forward SOCKET PORT -- PROGRAM ARGS…` (hidden): the
//! forwarder inside a bubblewrap sandbox that has no network but its own
//! loopback. It listens on 127.0.0.1:PORT there, relays every connection
//! to rascal's egress proxy through the unix socket SOCKET (bound into the
//! sandbox), and runs the agent, exiting with its status. The agent's
//! `HTTPS_PROXY` points at 127.0.0.1:PORT; there is no other way out.

use super::args::EgressForwardArgs;
use super::exit::CliError;
use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;

pub fn egress_forward(args: EgressForwardArgs) -> Result<i32, CliError> {
    let Some((program, rest)) = args.command.split_first() else {
        return Err(CliError::Usage(
            "__egress-forward needs the agent's command after `--`".into(),
        ));
    };
    let listener = TcpListener::bind(("127.0.0.1", args.port)).map_err(|e| {
        CliError::Usage(format!(
            "the egress forwarder could not listen on 127.0.0.1:{} inside the sandbox: {e}",
            args.port
        ))
    })?;
    let socket = args.socket.clone();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(conn) = conn else { continue };
            let socket = socket.clone();
            std::thread::spawn(move || relay(conn, &socket));
        }
    });
    let status = std::process::Command::new(program)
        .args(rest)
        .status()
        .map_err(|e| CliError::Usage(format!("could not run `{program}` in the sandbox: {e}")))?;
    use std::os::unix::process::ExitStatusExt;
    Ok(status
        .code()
        .unwrap_or_else(|| 128 + status.signal().unwrap_or(0)))
}

/// Copy both ways between the agent's connection and the proxy's socket.
fn relay(tcp: TcpStream, socket: &PathBuf) {
    let Ok(unix) = UnixStream::connect(socket) else {
        return;
    };
    let (Ok(mut tcp_r), Ok(mut unix_w)) = (tcp.try_clone(), unix.try_clone()) else {
        return;
    };
    let up = std::thread::spawn(move || {
        copy(&mut tcp_r, &mut unix_w);
        let _ = unix_w.shutdown(Shutdown::Write);
    });
    let (mut unix_r, mut tcp_w) = (unix, tcp);
    copy(&mut unix_r, &mut tcp_w);
    let _ = tcp_w.shutdown(Shutdown::Write);
    let _ = up.join();
}

fn copy(from: &mut impl Read, to: &mut impl Write) {
    let mut buf = [0u8; 16 * 1024];
    loop {
        match from.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => {
                if to.write_all(&buf[..n]).is_err() {
                    return;
                }
            }
        }
    }
}
