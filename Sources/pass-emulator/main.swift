import Glibc
import PassEmulator

exit(PassEmulatorCommand.run(Array(CommandLine.arguments.dropFirst())))
