//! The lessons page (`/lessons/`): the course unit beside the lab. Lessons, steps and exercises
//! come from `lessons/` (Markdown and `course.json`, editable without Rust); answers are checked
//! by the core against the sample they name; the lab itself runs beside, in a frame driven by
//! its permalinks. A separate bundle, so the lab's own download stays small.

mod app;
mod card;
mod exercise;
mod judge;
mod key;
mod map;
mod page;
mod pick;
mod words;

fn main() {
    tracelab_web::install_panic_hook();
    leptos::mount::mount_to_body(app::App);
}
