//! `yarn-am`: submit and run elastic, locality-aware work on Hadoop YARN.
//!
//! The binary edge: parses the command line, sets up logging, and hands each subcommand
//! to its module. Errors become `anyhow` here and a meaningful exit code.

use std::process::ExitCode;

use clap::Parser;
use yarn_am::{am, cli, executor, split, submit, tools};

fn main() -> ExitCode {
    quiet_on_closed_stdout();
    let cli = cli::Cli::parse();
    init_tracing(cli.verbose);
    match cli.command {
        cli::Command::Nodes(args) => report(tools::nodes::run(args)),
        cli::Command::Plan(args) => tools::plan::run(args),
        cli::Command::Submit(args) => exit(submit::run(*args)),
        cli::Command::Status(args) => exit(tools::status::status(args)),
        cli::Command::Kill(args) => exit(tools::status::kill(args)),
        cli::Command::Logs(args) => exit(tools::logs::logs(args)),
        cli::Command::List(args) => exit(tools::status::list(args)),
        cli::Command::Am => am::run(),
        cli::Command::Executor => executor::run(),
        cli::Command::Split(cli::SplitCommand::Cat(args)) => report(split::cat(args)),
        cli::Command::Kv(args) => exit(tools::kv::run(args)),
    }
}

/// `yarn-am list | head -3`: once the reader is gone, `println!` fails with a broken pipe
/// and panics. That is no error of ours, and a shell pipeline expects the writer to end
/// quietly (as SIGPIPE would end it; Rust ignores SIGPIPE so that sockets report EPIPE
/// instead of killing the process), so that one panic exits with the shell's code for it.
fn quiet_on_closed_stdout() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let text = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or_default();
        if text.starts_with("failed printing to stdout") && text.contains("Broken pipe") {
            std::process::exit(141);
        }
        default(info);
    }));
}

/// Logs go to stderr so stdout stays machine-readable (JSON from `plan`, tables from `nodes`).
fn init_tracing(verbose: u8) {
    let default = match verbose {
        0 => "warn",
        1 => "info,yarn_am=info,yarn_client=info",
        _ => "debug",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_env("YARN_AM_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    // Colour only on a terminal: container logs are files people read and grep.
    use std::io::IsTerminal;
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(std::io::stderr().is_terminal())
        .with_writer(std::io::stderr)
        .init();
}

/// For commands whose exit code carries an outcome (an application's final state: 0
/// succeeded, 1 failed, 3 killed, 4 still running). When yarn-am itself could not do the job
/// (bad input, no RM) the code is 2, so a script can tell "the app failed" from "we never
/// found out".
fn exit(result: anyhow::Result<ExitCode>) -> ExitCode {
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("yarn-am: error: {e:#}");
            ExitCode::from(2)
        }
    }
}

/// Exit code 1 for a failed operation, with the whole error chain on stderr.
fn report(result: anyhow::Result<()>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("yarn-am: error: {e:#}");
            ExitCode::from(1)
        }
    }
}
