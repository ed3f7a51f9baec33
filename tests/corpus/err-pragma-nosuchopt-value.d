#pragma D option nosuchopt=5
BEGIN { exit(0); }