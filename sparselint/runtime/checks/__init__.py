"""One module per hazard family. Each defines `install(session) -> undo`, where `undo()` puts
torch back as it was."""
