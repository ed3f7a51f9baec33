BEGIN
{
	mode = "fast";
}

BEGIN
/mode == "slow"/
{
	printf("slow\n");
}

BEGIN
/mode == "fast"/
{
	printf("fast\n");
	exit(0);
}
