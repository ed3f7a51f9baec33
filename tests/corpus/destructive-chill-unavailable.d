#pragma D option destructive
BEGIN
{
	chill(100);
}
