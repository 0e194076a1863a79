//! Every exit status `tracelab` uses, in one table: each status means one thing whichever
//! subcommand returns it, so a script can test `$?` without knowing which command ran.
//! `docs/cli.md` prints this table and a test checks that the two agree.

/// What a run of `tracelab` ended with. The numbers are the process's exit status.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Exit {
    /// The command did what it was asked.
    Done = 0,
    /// The command could not do its work: an unreadable or invalid file, an unusable setting,
    /// a trace that could not be written. The message on stderr says what and where.
    Error = 1,
    /// A command-line mistake (clap's own status for it).
    Usage = 2,
    /// `record`: every measured attempt failed; the trace is written all the same, every
    /// failure kept.
    AllFailed = 3,
    /// `record`: some measured attempts were never sent because the recorder ran out of open
    /// files, so the run measured the client, not the server (the trace keeps them, marked
    /// `not_sent`).
    MeasuredTheClient = 4,
    /// `compare`: the runs do not share one contract; the comparison is still printed,
    /// labelled.
    ContractBroken = 5,
    /// `record` and `sweep`: stopped by Ctrl-C or SIGTERM; every finished attempt is kept.
    /// 128 + 2, as a shell reports a command ended by SIGINT.
    Interrupted = 130,
}

impl Exit {
    /// Every status, in the order the table lists them.
    pub const ALL: [Exit; 7] = [
        Exit::Done,
        Exit::Error,
        Exit::Usage,
        Exit::AllFailed,
        Exit::MeasuredTheClient,
        Exit::ContractBroken,
        Exit::Interrupted,
    ];

    /// The process exit status.
    pub const fn code(self) -> u8 {
        self as u8
    }

    /// The commands that can return it, and when: one row of the table in `docs/cli.md`.
    pub const fn meaning(self) -> &'static str {
        match self {
            Exit::Done => "every command: it did what it was asked (for `record`: the run finished and at least one measured attempt succeeded)",
            Exit::Error => "every command: it could not do its work (an unreadable or invalid file, an unusable setting, a trace that could not be written); stderr says what and where",
            Exit::Usage => "every command: a command-line mistake",
            Exit::AllFailed => "`record`: every measured attempt failed (the trace is written all the same, every failure kept)",
            Exit::MeasuredTheClient => "`record`: some measured attempts were never sent because the recorder ran out of open files: the run measured the client, not the server (the trace keeps them, marked `not_sent`; raise `ulimit -n`)",
            Exit::ContractBroken => "`compare`: the runs do not share one baseline contract (the comparison is still printed, labelled)",
            Exit::Interrupted => "`record`, `sweep`: stopped by Ctrl-C or SIGTERM: no new request, in-flight ones get `--grace`, then are recorded as `cancelled`; every finished attempt is kept",
        }
    }

    /// The whole table as Markdown, as `docs/cli.md` prints it.
    pub fn markdown_table() -> String {
        let mut table = String::from("| status | when |\n|---|---|\n");
        for exit in Exit::ALL {
            table.push_str(&format!("| {} | {} |\n", exit.code(), exit.meaning()));
        }
        table
    }

    /// The table for `--help`: one status per line.
    pub fn help_text() -> String {
        let mut text = String::from("Exit status (the same for every tracelab command):\n");
        for exit in Exit::ALL {
            text.push_str(&format!("  {:>3}  {}\n", exit.code(), exit.meaning()));
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::Exit;

    #[test]
    fn each_status_means_one_thing() {
        let mut codes: Vec<u8> = Exit::ALL.iter().map(|e| e.code()).collect();
        codes.sort_unstable();
        codes.dedup();
        assert_eq!(codes.len(), Exit::ALL.len(), "two meanings share a status");
    }

    #[test]
    fn the_documented_table_is_this_one() {
        let doc = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/cli.md"),
        )
        .expect("docs/cli.md");
        assert!(
            doc.contains(&Exit::markdown_table()),
            "docs/cli.md's exit-status table differs from crates/recorder/src/exit.rs; paste:\n{}",
            Exit::markdown_table()
        );
    }
}
