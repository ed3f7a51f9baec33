#pragma D option nosuchopt
BEGIN { exit(0); }