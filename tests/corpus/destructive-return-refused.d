#pragma D option destructive
/* return(int) (dtrace-utils' error injection) compiles; no probe here can override a return value. */
BEGIN
{
	return(-1);
}
