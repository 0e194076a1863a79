//! The capacity page (`/capacity/`): a load sweep (the sample, a sweep folder's files, or a sweep
//! on the simulator), each step's figures with their intervals and verdict, the highest load that
//! still meets the learner's target, the knee, and one chart — every number and sentence the
//! core's (`tracelab_core::capacity`). A separate bundle, so the lab's own download does not grow.

mod app;
mod chart;
mod load;
mod page;
mod steps;
mod words;

fn main() {
    tracelab_web::install_panic_hook();
    leptos::mount::mount_to_body(app::App);
}
