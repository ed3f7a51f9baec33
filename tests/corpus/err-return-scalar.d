/* return is an action's name, not a keyword (dtrace-utils). */
BEGIN
{
	return;
}
