//! Checks on the files under `packaging/`: the systemd unit must pass
//! `systemd-analyze verify` without a single warning, and the shell scripts
//! must at least parse (the install script also runs in `--dry-run` mode).
//!
//! These tests need `systemd-analyze` (Debian/Ubuntu: `apt-get install
//! systemd`) and a POSIX `sh`. A missing `systemd-analyze` fails the test on
//! purpose: a silently skipped check would let a broken unit ship.

#![cfg(unix)]

use std::fs;
use std::io::ErrorKind;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Path of the unit's binary as written in packaging/tollgate.service.
const INSTALLED_BINARY: &str = "/usr/bin/tollgate";

fn repo_path(relative: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(relative)
}

fn built_binary() -> &'static str {
    env!("CARGO_BIN_EXE_tollgate")
}

/// Renders `output` for assertion messages.
fn describe(output: &Output) -> String {
    format!(
        "status: {}\n--- stdout ---\n{}\n--- stderr ---\n{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr),
    )
}

/// Quotes `path` as the executable of a systemd command line: `%` starts a
/// specifier, so it is doubled; a path with spaces or quotes is wrapped in
/// double quotes with C-style escapes. (`$` needs nothing: systemd expands
/// variables in the arguments only, never in the executable path.)
fn systemd_exec_word(path: &str) -> String {
    let unexpanded = path.replace('%', "%%");
    let needs_quotes = unexpanded
        .chars()
        .any(|c| c.is_whitespace() || matches!(c, '"' | '\'' | '\\' | ';'));
    if needs_quotes {
        let escaped = unexpanded.replace('\\', "\\\\").replace('"', "\\\"");
        format!("\"{escaped}\"")
    } else {
        unexpanded
    }
}

#[test]
fn systemd_unit_verifies_cleanly() {
    let unit = fs::read_to_string(repo_path("packaging/tollgate.service"))
        .expect("read packaging/tollgate.service");

    // `systemd-analyze verify` checks that the ExecStart= executable exists
    // and is executable, and /usr/bin/tollgate is not installed on a build
    // machine. Point ExecStart= at the binary cargo just built; everything
    // else in the unit is verified exactly as shipped.
    let exec_prefix = format!("ExecStart={INSTALLED_BINARY} ");
    let exec_lines = unit
        .lines()
        .filter(|line| line.starts_with("ExecStart="))
        .count();
    assert_eq!(
        exec_lines, 1,
        "expected exactly one ExecStart= line in the unit"
    );
    assert!(
        unit.lines().any(|line| line.starts_with(&exec_prefix)),
        "the unit's ExecStart= must run {INSTALLED_BINARY}"
    );
    let replacement = format!("ExecStart={} ", systemd_exec_word(built_binary()));
    let test_unit: String = unit
        .lines()
        .map(|line| match line.strip_prefix(&exec_prefix) {
            Some(args) => format!("{replacement}{args}\n"),
            None => format!("{line}\n"),
        })
        .collect();

    // The file name matters: systemd derives the unit name and type from it.
    let dir = tempfile::tempdir().expect("create temp dir");
    let unit_path = dir.path().join("tollgate.service");
    fs::write(&unit_path, test_unit).expect("write unit copy");

    let output = match Command::new("systemd-analyze")
        .arg("verify")
        .arg(&unit_path)
        // A debug log level in the caller's environment would fill stderr.
        .env_remove("SYSTEMD_LOG_LEVEL")
        .output()
    {
        Ok(output) => output,
        Err(err) if err.kind() == ErrorKind::NotFound => panic!(
            "systemd-analyze not found: the test setup must install systemd \
             (e.g. `apt-get install -y systemd`) so the unit can be verified"
        ),
        Err(err) => panic!("failed to run systemd-analyze: {err}"),
    };

    assert!(
        output.status.success(),
        "systemd-analyze verify failed\n{}",
        describe(&output)
    );
    // Unknown keys, bad values and the like are only warnings (exit 0), so
    // any output on stderr counts as a failure.
    assert!(
        output.stderr.is_empty(),
        "systemd-analyze verify printed warnings\n{}",
        describe(&output)
    );
}

#[test]
fn install_script_is_valid_sh() {
    let script = repo_path("packaging/install.sh");

    let syntax = Command::new("sh")
        .arg("-n")
        .arg(&script)
        .output()
        .expect("run sh -n");
    assert!(
        syntax.status.success(),
        "sh -n packaging/install.sh failed\n{}",
        describe(&syntax)
    );

    // --dry-run needs neither root nor systemd and changes nothing; it still
    // validates the binary path, so hand it the freshly built binary.
    let dry_run = Command::new("sh")
        .arg(&script)
        .arg("--dry-run")
        .arg(built_binary())
        .output()
        .expect("run install.sh --dry-run");
    assert!(
        dry_run.status.success(),
        "install.sh --dry-run failed\n{}",
        describe(&dry_run)
    );
    let stdout = String::from_utf8_lossy(&dry_run.stdout);
    assert!(
        stdout.contains(INSTALLED_BINARY),
        "install.sh --dry-run does not mention {INSTALLED_BINARY}\n{}",
        describe(&dry_run)
    );
    assert!(
        stdout.contains("systemctl daemon-reload"),
        "install.sh --dry-run does not reload systemd\n{}",
        describe(&dry_run)
    );
}

#[test]
fn debian_maintainer_scripts_are_valid_sh() {
    for name in ["postinst", "prerm", "postrm"] {
        let path = repo_path(&format!("packaging/debian/{name}"));
        let text = fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {name}: {e}"));

        // Cargo.toml sets [package.metadata.deb] systemd-units, and cargo-deb
        // then requires every maintainer script to contain this token, where
        // it inserts its generated systemd snippets.
        assert!(
            text.lines().any(|line| line.trim() == "#DEBHELPER#"),
            "packaging/debian/{name} lacks the #DEBHELPER# line cargo-deb needs"
        );
        // cargo-deb replaces every occurrence, even inside a comment, which
        // would run its snippet early or comment half of it out.
        assert_eq!(
            text.matches("#DEBHELPER#").count(),
            1,
            "packaging/debian/{name} names #DEBHELPER# outside its one line"
        );

        let mode = fs::metadata(&path)
            .unwrap_or_else(|e| panic!("stat {name}: {e}"))
            .permissions()
            .mode();
        assert!(
            (mode & 0o111) != 0,
            "packaging/debian/{name} is not executable"
        );

        let syntax = Command::new("sh")
            .arg("-n")
            .arg(&path)
            .output()
            .expect("run sh -n");
        assert!(
            syntax.status.success(),
            "sh -n packaging/debian/{name} failed\n{}",
            describe(&syntax)
        );
    }
}

/// The package metadata: the config is a conffile, the data directory is
/// never shipped, and nothing is enabled or started at install. (The built
/// .deb itself is checked by packaging/check-deb.sh, which .ci/test runs
/// after `cargo deb`.)
#[test]
fn the_deb_enables_and_starts_nothing_and_keeps_the_config_a_conffile() {
    let manifest: toml::Value =
        toml::from_str(&fs::read_to_string(repo_path("Cargo.toml")).unwrap()).unwrap();
    let deb = &manifest["package"]["metadata"]["deb"];
    assert_eq!(
        deb["conf-files"].as_array().unwrap(),
        &vec![toml::Value::String("/etc/tollgate/config.toml".into())]
    );
    let units = &deb["systemd-units"];
    assert_eq!(units["enable"].as_bool(), Some(false));
    assert_eq!(units["start"].as_bool(), Some(false));
    for asset in deb["assets"].as_array().unwrap() {
        let target = asset[1].as_str().unwrap();
        assert!(
            !target.starts_with("var/"),
            "{target} would be owned by dpkg"
        );
        let source = asset[0].as_str().unwrap();
        assert!(
            source.starts_with("target/") || repo_path(source).exists(),
            "{source} is missing"
        );
    }
    let check = repo_path("packaging/check-deb.sh");
    assert!(fs::metadata(&check).unwrap().permissions().mode() & 0o111 != 0);
    let parsed = Command::new("sh").arg("-n").arg(&check).output().unwrap();
    assert!(parsed.status.success(), "{}", describe(&parsed));
}

/// postinst creates the data directory 0750 for the service user, and
/// postrm never deletes it, not even on purge.
#[test]
fn the_maintainer_scripts_create_the_data_directory_and_never_delete_it() {
    let postinst = fs::read_to_string(repo_path("packaging/debian/postinst")).unwrap();
    assert!(
        postinst
            .contains(r#"install -d -m 0750 -o "$SERVICE_USER" -g "$SERVICE_USER" "$STATE_DIR""#)
    );
    assert!(postinst.contains("useradd --system"));
    let postrm = fs::read_to_string(repo_path("packaging/debian/postrm")).unwrap();
    for line in postrm.lines().filter(|l| !l.trim_start().starts_with('#')) {
        assert!(
            !(line.contains("rm ") && (line.contains("STATE_DIR") || line.contains("/var/lib"))),
            "postrm deletes data: {line}"
        );
    }
    let unit = fs::read_to_string(repo_path("packaging/tollgate.service")).unwrap();
    assert!(unit.contains("StateDirectoryMode=0750"));
}
