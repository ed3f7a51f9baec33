BEGIN
{
	@c[(char)65] = count();
	@c[(char)66] = count();
	@c[(char)66] = count();
	exit(0);
}
