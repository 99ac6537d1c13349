//! The admin socket: `tollgate.sock` in the data directory, mode 0600.
//!
//! The file permission is the credential (as with Docker's socket): only
//! the account that runs the server, and root, can connect. One request per
//! connection: a JSON [`Command`] on one line, answered by one JSON line,
//! `{"ok": true, "result": ...}` or `{"ok": false, "error": {kind, message}}`.

use std::io::ErrorKind;
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{UnixListener, UnixStream};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::{Command, Context, execute};
use crate::base::tasks::Tasks;
use crate::store::{SOCKET_FILE, StoreError};

/// A command line longer than this is refused.
const MAX_REQUEST: u64 = 1024 * 1024;

#[derive(Debug, Serialize, Deserialize)]
pub struct Reply {
    pub ok: bool,
    #[serde(default)]
    pub result: Value,
    pub error: Option<ReplyError>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ReplyError {
    /// `not_found`, `conflict`, `invalid`, `forbidden`, `unavailable` or
    /// `internal`.
    pub kind: String,
    pub message: String,
}

impl ReplyError {
    pub fn from_store(e: &StoreError) -> ReplyError {
        let kind = match e {
            StoreError::NotFound(_) => "not_found",
            StoreError::Conflict(_) => "conflict",
            StoreError::Invalid(_) => "invalid",
            StoreError::Forbidden(_) => "forbidden",
            StoreError::Closed | StoreError::Locked(_) => "unavailable",
            _ => "internal",
        };
        ReplyError {
            kind: kind.into(),
            message: e.to_string(),
        }
    }
}

/// Binds the socket (before the server announces itself, so a CLI started
/// after that always finds it).
pub fn bind(data_dir: &Path) -> std::io::Result<UnixListener> {
    let path = data_dir.join(SOCKET_FILE);
    // A socket file left by a killed server answers nobody: remove it. (A
    // live server would hold the store lock, so we would not be here.)
    match std::fs::remove_file(&path) {
        Err(e) if e.kind() != ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    let listener = UnixListener::bind(&path)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600))?;
    }
    Ok(listener)
}

/// Serves the bound socket until `shutdown`; the handle completes once every
/// connection has been answered and the socket file removed.
pub fn serve(
    listener: UnixListener,
    data_dir: &std::path::Path,
    context: Context,
    tasks: &Tasks,
    shutdown: CancellationToken,
) -> JoinHandle<()> {
    let path = data_dir.join(SOCKET_FILE);
    // A loop of the task set; it ends with `shutdown` (stop accepting).
    tasks.spawn(async move {
        let tracker = TaskTracker::new();
        loop {
            tokio::select! {
                () = shutdown.cancelled() => break,
                accepted = listener.accept() => match accepted {
                    Ok((stream, _)) => {
                        let context = context.clone();
                        tracker.spawn(async move { answer(stream, &context).await });
                    }
                    Err(e) => tracing::warn!(error = %e, "admin socket accept failed"),
                },
            }
        }
        tracker.close();
        tracker.wait().await;
        let _ = std::fs::remove_file(&path);
    })
}

async fn answer(stream: UnixStream, context: &Context) {
    let (read, mut write) = stream.into_split();
    let mut line = String::new();
    let reply = match BufReader::new(read.take(MAX_REQUEST))
        .read_line(&mut line)
        .await
    {
        Err(e) => failure("invalid", format!("unreadable request: {e}")),
        Ok(_) => match serde_json::from_str::<Command>(&line) {
            Err(e) => failure("invalid", format!("not an admin command: {e}")),
            Ok(command) => match execute(context, command).await {
                Ok(result) => Reply {
                    ok: true,
                    result,
                    error: None,
                },
                Err(e) => Reply {
                    ok: false,
                    result: Value::Null,
                    error: Some(ReplyError::from_store(&e)),
                },
            },
        },
    };
    let mut bytes = serde_json::to_vec(&reply).unwrap_or_default();
    bytes.push(b'\n');
    let _ = write.write_all(&bytes).await;
}

fn failure(kind: &str, message: String) -> Reply {
    Reply {
        ok: false,
        result: Value::Null,
        error: Some(ReplyError {
            kind: kind.into(),
            message,
        }),
    }
}

/// Sends a command to a running server. `Ok(None)` when no server listens
/// on the data directory's socket.
pub async fn call(data_dir: &Path, command: &Command) -> std::io::Result<Option<Reply>> {
    let path = data_dir.join(SOCKET_FILE);
    let stream = match UnixStream::connect(&path).await {
        Ok(stream) => stream,
        Err(e) if matches!(e.kind(), ErrorKind::NotFound | ErrorKind::ConnectionRefused) => {
            return Ok(None);
        }
        Err(e) => return Err(e),
    };
    let (read, mut write) = stream.into_split();
    let mut bytes = serde_json::to_vec(command)?;
    bytes.push(b'\n');
    write.write_all(&bytes).await?;
    let mut line = String::new();
    BufReader::new(read).read_line(&mut line).await?;
    let reply = serde_json::from_str(&line).map_err(|e| {
        std::io::Error::new(
            ErrorKind::InvalidData,
            format!("bad reply from the server: {e}"),
        )
    })?;
    Ok(Some(reply))
}
