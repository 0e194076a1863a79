//! The compare page (`/compare/`): two traces side by side with the core's contract check, each
//! figure's difference, its 95 % interval and verdict, and one chart of both TTFT distributions.
//! A separate bundle like the lessons page, so the lab's own download does not grow.

mod app;
mod chart;
mod page;
mod table;
mod words;

fn main() {
    tracelab_web::install_panic_hook();
    leptos::mount::mount_to_body(app::App);
}
