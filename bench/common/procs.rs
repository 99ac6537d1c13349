//! The servers under test run as child processes, so each one's CPU time
//! and resident memory can be read from `/proc` on its own: `utime + stime`
//! (plus the same for children it has reaped) from `/proc/<pid>/stat`, and
//! `VmHWM` / `VmRSS` from `/proc/<pid>/status`, summed over the process and
//! its descendants (LiteLLM and Portkey may fork workers).

use std::net::SocketAddr;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A server started by the benchmark: stopped (its whole process group)
/// when dropped.
pub struct Server {
    pub name: String,
    pub addr: SocketAddr,
    child: Child,
}

impl Server {
    /// Starts `command` in its own process group with its output in
    /// `log`, and waits until `addr` accepts connections.
    pub fn start(name: &str, mut command: Command, addr: SocketAddr, log: &Path) -> Server {
        let out = std::fs::File::create(log).expect("cannot create a server log");
        let err = out.try_clone().expect("cannot clone a file handle");
        command
            .stdin(Stdio::null())
            .stdout(Stdio::from(out))
            .stderr(Stdio::from(err))
            .process_group(0);
        let child = command
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {name}: {e}"));
        let mut server = Server {
            name: name.to_owned(),
            addr,
            child,
        };
        server.wait_ready(log, Duration::from_secs(120));
        server
    }

    fn wait_ready(&mut self, log: &Path, limit: Duration) {
        let started = Instant::now();
        loop {
            if std::net::TcpStream::connect_timeout(&self.addr, Duration::from_millis(200)).is_ok()
            {
                return;
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                let tail = std::fs::read_to_string(log).unwrap_or_default();
                let tail: String = tail.lines().rev().take(20).collect::<Vec<_>>().join("\n");
                panic!(
                    "{} exited ({status}) before listening; its log, last lines first:\n{tail}",
                    self.name
                );
            }
            if started.elapsed() > limit {
                panic!(
                    "{} did not listen on {} within {limit:?}",
                    self.name, self.addr
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// CPU seconds used so far by the server and its descendants.
    pub fn cpu_seconds(&self) -> f64 {
        tree(self.pid()).iter().map(|&pid| cpu_seconds(pid)).sum()
    }

    /// Resident memory in bytes, summed over the tree: (`VmRSS`, `VmHWM`).
    pub fn memory(&self) -> (u64, u64) {
        tree(self.pid())
            .iter()
            .map(|&pid| {
                (
                    status_kib(pid, "VmRSS:") * 1024,
                    status_kib(pid, "VmHWM:") * 1024,
                )
            })
            .fold((0, 0), |(r, h), (r2, h2)| (r + r2, h + h2))
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        // The group we created for this child (its pid): SIGTERM, then
        // SIGKILL if it lingers.
        let group = -(self.child.id() as i32);
        // SAFETY: kill(2) with a negative pid signals only that process group.
        unsafe { libc::kill(group, libc::SIGTERM) };
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                // SAFETY: as above; stragglers of the group, if any.
                unsafe { libc::kill(group, libc::SIGKILL) };
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        // SAFETY: as above.
        unsafe { libc::kill(group, libc::SIGKILL) };
        let _ = self.child.wait();
    }
}

/// `pid` and every live descendant.
fn tree(pid: u32) -> Vec<u32> {
    let mut parents: Vec<(u32, u32)> = Vec::new();
    if let Ok(entries) = std::fs::read_dir("/proc") {
        for entry in entries.flatten() {
            let Some(p) = entry
                .file_name()
                .to_str()
                .and_then(|s| s.parse::<u32>().ok())
            else {
                continue;
            };
            if let Some(fields) = stat_fields(p) {
                // Field 4 (ppid) is the second after the command name.
                if let Some(ppid) = fields.get(1).and_then(|s| s.parse().ok()) {
                    parents.push((p, ppid));
                }
            }
        }
    }
    let mut out = vec![pid];
    let mut i = 0;
    while i < out.len() {
        let parent = out[i];
        out.extend(
            parents
                .iter()
                .filter(|(_, pp)| *pp == parent)
                .map(|(p, _)| *p),
        );
        i += 1;
    }
    out
}

/// The fields of `/proc/<pid>/stat` after the command name (field 3 on).
fn stat_fields(pid: u32) -> Option<Vec<String>> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after = &stat[stat.rfind(')')? + 2..];
    Some(after.split_whitespace().map(str::to_owned).collect())
}

fn cpu_seconds(pid: u32) -> f64 {
    let Some(fields) = stat_fields(pid) else {
        return 0.0;
    };
    // utime, stime, cutime, cstime are fields 14 to 17; index 0 is field 3.
    let ticks: u64 = (11..15)
        .filter_map(|i| fields.get(i).and_then(|s| s.parse::<u64>().ok()))
        .sum();
    // SAFETY: sysconf has no preconditions.
    let per_second = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
    ticks as f64 / per_second
}

fn status_kib(pid: u32, field: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(field))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|n| n.parse().ok())
        })
        .unwrap_or(0)
}

/// Raises this process's open-file limit to its hard limit (children
/// inherit it): 5,000 streams need 5,000 sockets in the client, 10,000 in
/// a proxy. Returns the soft limit now in force.
pub fn raise_nofile() -> u64 {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit write and read only `limit`.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) != 0 {
            return 0;
        }
        limit.rlim_cur = limit.rlim_max;
        libc::setrlimit(libc::RLIMIT_NOFILE, &limit);
        libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit);
    }
    limit.rlim_cur
}
