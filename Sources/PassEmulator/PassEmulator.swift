// The Adobe Pass emulator (issue 3).
