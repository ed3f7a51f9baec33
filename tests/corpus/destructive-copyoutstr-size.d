BEGIN
{
	copyoutstr("x", 0, "y");
}
