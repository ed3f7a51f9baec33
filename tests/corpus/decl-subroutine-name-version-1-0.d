/* Before D 1.1 there was no strstr() or index(): their names are free. */
#pragma D option version=1.0

int strstr;
int index;

BEGIN
{
	strstr = 2;
	printf("%d\n", strstr);
	exit(0);
}
