/* escape.exp: the library, installed under a name of hostile bytes. */
int esclib(int x)
{
	return x + 1;
}
